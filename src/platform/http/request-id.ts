/**
 * A caller's X-Request-Id is kept when it is one printable token of at most 128 characters (letters, digits and
 * `-_.:/+=@`), so it can go into a log line and back into a header as it came; anything else (empty, too long,
 * spaces, control characters, quotes) is replaced by a fresh UUID, as is a missing one.
 */
const SANE_REQUEST_ID = /^[A-Za-z0-9\-_.:/+=@]{1,128}$/;

export function acceptedRequestId(presented: string | undefined): string {
  return presented !== undefined && SANE_REQUEST_ID.test(presented) ? presented : crypto.randomUUID();
}
