/**
 * Text a customer chose (a workspace's display name) set into a message the platform
 * sends to an address it does not know (issue 42): it must read as a name and nothing
 * else. `plainName` keeps letters, marks, digits, spaces and the punctuation of company
 * names (& ' ( ) , - .), after NFKC folding, so full-width or styled look-alikes fold to
 * what they stand for before the check. Everything else (`@ : / \ < > # ? = % _`, line
 * breaks, control and format characters, bidi overrides, emoji) becomes a space; a dot
 * is kept only before a space or at the end ("PT. Maju"), so no host name
 * (`evil.example`), URL or e-mail address survives for a mail client to make clickable.
 * Runs of spaces become one, and the result is clamped to `max` characters (code points).
 */
export const PLAIN_NAME_MAX = 60;

export function plainName(text: string, max = PLAIN_NAME_MAX): string {
  const kept = text.normalize('NFKC').replace(/[^\p{L}\p{M}\p{N} &'(),.-]/gu, ' ');
  const noHosts = kept.replace(/\.(?=[^\s])/g, ' ');
  const oneLine = noHosts.replace(/\s+/g, ' ').trim();
  return Array.from(oneLine).slice(0, max).join('').trim();
}
