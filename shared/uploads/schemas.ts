/** joi schemas of the upload routes (the multipart upload itself is read by readOneFile, api/middleware/multipart.ts). */
import Joi from 'joi';

/** POST /api/escrows/:id/attachments: the link as the upload endpoint returned it, or the upload id. */
export const attachBody = Joi.object({ attachment_url: Joi.string().trim().min(1).max(2048).required() });
