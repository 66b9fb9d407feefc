import Joi from 'joi';

const email = Joi.string().trim().max(254).email({ tlds: false });
const sixDigits = Joi.string().pattern(/^\d{6}$/).messages({ 'string.pattern.base': 'code must be exactly 6 digits' });

export const register = Joi.object({
  email: email.required(),
  // Strength rules (WEAK_PASSWORD) and username rules (INVALID_USERNAME) are checked by the service.
  password: Joi.string().min(1).max(128).required(),
  username: Joi.string().min(1).max(254).required(),
  full_name: Joi.string().trim().min(1).max(120).required(),
});

export const verifyEmail = Joi.object({ code: sixDigits.required() });

export const login = Joi.object({
  email: email.required(),
  password: Joi.string().min(1).max(128).required(),
  turnstile_token: Joi.string().max(4096).allow(''),
});

export const login2fa = Joi.object({
  ticket: Joi.string().max(256).required(),
  code: sixDigits.required(),
});

const optionalText = (max: number) => Joi.string().trim().max(max).allow(null, '');

export const updateMe = Joi.object({
  full_name: Joi.string().trim().min(1).max(120),
  username: Joi.string().min(1).max(254),
  phone: Joi.string()
    .trim()
    .pattern(/^\+?[0-9][0-9 ()-]{5,19}$/)
    .allow(null)
    .messages({ 'string.pattern.base': 'phone must be 6-20 digits, optionally starting with +' }),
  social_instagram: optionalText(100),
  social_shopee: optionalText(200),
  social_tiktokshop: optionalText(200),
  two_factor_method: Joi.string().valid('none', 'email'),
  dashboard_tour_completed: Joi.boolean(),
  // Required to turn two-step sign-in off; accepted and ignored otherwise.
  current_password: Joi.string()
    .min(1)
    .max(128)
    .when('two_factor_method', { is: 'none', then: Joi.required() })
    .messages({ 'any.required': 'current_password is required to turn two-step sign-in off' }),
})
  .min(1)
  .messages({ 'object.min': 'send at least one field to change' });

export const rotateKey = Joi.object({
  label: Joi.string()
    .max(64)
    .pattern(/^[A-Za-z0-9][A-Za-z0-9 _.:-]*$/)
    .messages({ 'string.pattern.base': 'label may contain letters, digits, spaces and _ . : -, starting with a letter or digit' }),
});

export const forgotPassword = Joi.object({ email: email.required() });

export const resetPassword = Joi.object({
  token: Joi.string().max(256).required(),
  password: Joi.string().min(1).max(128).required(),
});

export const changePassword = Joi.object({
  current_password: Joi.string().min(1).max(128).required(),
  new_password: Joi.string().min(1).max(128).required(),
});

export const staffNote = Joi.object({ note: Joi.string().max(2000).allow('') });

export const userIdParams = Joi.object({ id: Joi.string().guid({ version: ['uuidv4', 'uuidv7', 'uuidv1'] }).required() });
