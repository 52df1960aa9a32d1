/**
 * The one length rule for a user's password, wherever it is set: the API and web (users), `svc user:create` and
 * `svc user:password`, and the first admin's ADMIN_PASSWORD.
 */
export const MIN_PASSWORD_LENGTH = 12;
