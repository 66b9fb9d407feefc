/**
 * The CSV writer of the enterprise exports (audit, deals, disbursements: spec 4.8, 4.9;
 * decisions 0011, 0020): csv-stringify, never hand-written quoting. One header line, CRLF
 * after every line (the last included), a cell quoted when it holds a comma, a quote or a
 * line break, dates as ISO 8601 UTC, booleans as true/false, null and undefined as empty.
 * A text cell starting with =, +, -, @, tab or carriage return (or their full-width forms)
 * is defused with a leading single quote (csv-stringify's `escape_formulas`), so a
 * spreadsheet never runs it as a formula; numbers are written as they are.
 */
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { stringify, type Options } from 'csv-stringify';
import { stringify as stringifySync } from 'csv-stringify/sync';

/** One cell as a source hands it over. */
export type Cell = string | number | boolean | Date | null | undefined;

export type CsvRecord<C extends string> = Record<C, Cell>;

function options(columns: readonly string[], header: boolean): Options {
  return {
    header,
    columns: [...columns],
    record_delimiter: 'windows',
    // A cell holding a bare \n or \r is quoted too, not only one holding CRLF.
    quote_record_delimiter: true,
    escape_formulas: true,
    cast: { date: (d) => d.toISOString(), boolean: (b) => String(b) },
  };
}

/** A stored file is written in parts of about this many characters. */
export const PART_CHARS = 64 * 1024;

/**
 * Streams `records` through the CSV writer (the header first, even with no records) and
 * hands the text to `onPart` in parts of about PART_CHARS characters, in order; a part is
 * written before the next records are read (back-pressure), so only one part is held.
 */
export async function writeCsv<C extends string>(columns: readonly C[], records: AsyncIterable<CsvRecord<C>>, onPart: (text: string) => Promise<void>): Promise<void> {
  await pipeline(Readable.from(records), stringify(options(columns, true)), async (chunks: AsyncIterable<Buffer | string>) => {
    let buffered = '';
    for await (const chunk of chunks) {
      buffered += String(chunk);
      if (buffered.length >= PART_CHARS) {
        await onPart(buffered);
        buffered = '';
      }
    }
    if (buffered !== '') await onPart(buffered);
  });
}

/** One cell as the exports write it (no line ending). */
export function csvCell(value: Cell): string {
  return stringifySync([{ v: value }], { ...options(['v'], false), eof: false });
}
