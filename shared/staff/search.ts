/**
 * The staff search of the console's queues (issue 46): what staff are told on the phone, an
 * id (matched exactly) or part of a name, e-mail, username or item (case-insensitive, LIKE
 * wildcards taken literally).
 */
import type { Knex } from 'knex';
import { isUuid } from '../ids.js';

/** `%term%` for ILIKE with `\`, `%` and `_` escaped (Postgres's default LIKE escape is `\`). */
export const containsPattern = (term: string): string => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Where a queue looks for a term: columns holding ids (matched exactly) and text (matched in part). */
export interface SearchColumns {
  ids: readonly string[];
  text: readonly string[];
}

/** Narrows `q` to rows where one of `ids` equals the term (when it is a uuid) or one of `text` contains it. */
export function whereSearch(q: Knex.QueryBuilder, term: string, columns: SearchColumns): void {
  const like = containsPattern(term);
  void q.where((w) => {
    if (isUuid(term)) for (const column of columns.ids) void w.orWhere(column, term);
    for (const column of columns.text) void w.orWhereILike(column, like);
  });
}
