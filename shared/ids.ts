/** Identifier shapes used across the API. */
export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any RFC 4122 layout: a path id that is not one cannot name a row (answer 404, never a database error). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
