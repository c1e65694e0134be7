// Compact tokens found in free text are replaced before the text is kept anywhere: a chat question about a
// session's status carries its session token, and whoever can read the store (a Redis shared by several instances,
// a backup of the sqlite file) must find nothing there to act with (an export not yet made, a deregistration).
// - JWE, five base64url segments: every session, watch and callback token of this service (with `dir` its second
//   segment, the encrypted key, is empty);
// - a JSON-headed compact form, two to four segments whose first is base64url JSON ("eyJ" is `{"`): a JWS (an id
//   token, an API key signed as a JWT) and the account-abstraction proxy's tokens. Three dotted words without that
//   header are ordinary text (host names, versions) and stay.

const SEGMENT = '[A-Za-z0-9_-]';
/** Not inside a longer run of base64url text or dotted segments. */
const START = '(?<![A-Za-z0-9_.-])';
const END = `(?!\\.?${SEGMENT})`;
const JWE = `${SEGMENT}+\\.${SEGMENT}*\\.${SEGMENT}+\\.${SEGMENT}*\\.${SEGMENT}+`;
const JSON_HEADED = `eyJ${SEGMENT}*(?:\\.${SEGMENT}*){0,2}\\.${SEGMENT}+`;
const TOKEN = new RegExp(`${START}(?:${JWE}|${JSON_HEADED})${END}`, 'g');

/** What stands in for a token taken out. */
export const REDACTED_TOKEN = '[redacted token]';

/** `text` with every JWE- or JWS-shaped token replaced by REDACTED_TOKEN. */
export const redactTokens = (text: string): string => text.replace(TOKEN, REDACTED_TOKEN);
