import Joi from 'joi';

export const usersQuery = Joi.object({
  page: Joi.number().integer().min(1).max(10_000).default(1),
  limit: Joi.number().integer().min(1).max(50).default(24),
  search: Joi.string().trim().allow('').max(32).default(''),
  sort: Joi.string().valid('top', 'new', 'newest').default('top'),
  verified: Joi.string().valid('1', 'true', '0', 'false'),
}).options({ stripUnknown: true }); // a cache-buster (`?_=...`) is neither an error nor a cache key

export interface UsersQuery {
  page: number;
  limit: number;
  search: string;
  sort: 'top' | 'new' | 'newest';
  verified?: '1' | 'true' | '0' | 'false';
}

/** `:username` of a public path; a malformed one is answered 404 USER_NOT_FOUND by the service. */
export const usernameParams = Joi.object({ username: Joi.string().required() });
