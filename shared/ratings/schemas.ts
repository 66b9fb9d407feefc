/** joi schemas of the rating routes (consumer spec 4.7). */
import Joi from 'joi';

export const rate = Joi.object({
  stars: Joi.number().integer().min(1).max(5).required(),
  review: Joi.string().trim().max(1000).allow('', null),
});

export const publicRatingsQuery = Joi.object({
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(20),
}).options({ stripUnknown: true }); // public: a cache-buster (`?_=...`) is not an error
