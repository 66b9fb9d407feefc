/** Knobs of the public user pages (the bench and the tests change them). */
export const publicSettings = {
  /** Redis answer cache (the bench turns it off to measure the queries). */
  cache: process.env.PUBLIC_CACHE !== '0',
  cacheSeconds: 60,
  /** Search plan choice (`searchPlan`): walk the sort index while it visits under this × matches rows. */
  walkFactor: 4,
};
