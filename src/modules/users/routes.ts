import { z } from "@hono/zod-openapi";
import { apiRoute, jsonBody, jsonResponse, MessageBody, pathIds } from "../../platform/http/route.ts";
import { Password, User } from "./resource.ts";

const tag = "Users";
const UserParams = pathIds("id");
const one = z.object({ data: User });
const PasswordInput = z
  .object({ password: Password.openapi({ description: "The new password; write-only", example: "a-long-passphrase" }) })
  .openapi("UserPasswordInput");

export const enableUserRoute = apiRoute({
  method: "post",
  path: "/users/{id}/enable",
  operationId: "enableUser",
  tag,
  ability: "users.write",
  summary: "Enable a user",
  description:
    "The user's API tokens that are neither revoked nor expired work again from the next request. A user whose role grants more than the caller holds: 403.",
  request: { params: UserParams },
  responses: { 200: jsonResponse(one, "The user") },
});

export const disableUserRoute = apiRoute({
  method: "post",
  path: "/users/{id}/disable",
  operationId: "disableUser",
  tag,
  ability: "users.write",
  summary: "Disable a user",
  description:
    "Every API token of the user answers 401 from the very next request; the tokens are not revoked, so enabling the user restores them. " +
    "Every web session of the user ends with the change; enabling the user does not bring one back. " +
    "Refused with 409 for the caller's own user and for the last enabled admin, and with 403 for a user whose role grants more than the caller holds.",
  request: { params: UserParams },
  responses: {
    200: jsonResponse(one, "The user"),
    409: jsonResponse(MessageBody, "The caller's own user, or the last enabled admin"),
  },
});

export const changeUserPasswordRoute = apiRoute({
  method: "post",
  path: "/users/{id}/password",
  operationId: "changeUserPassword",
  tag,
  ability: "users.write",
  summary: "Set a user's password",
  description:
    "Replaces the password (at least 12 characters; stored only as a hash). Audited as user.password_change, never with the value. " +
    "Every web session of the user ends with the change (they log in again with the new password). " +
    "The user's API tokens are not affected; revoke them separately if the password leaked. A user whose role grants more than the caller holds: 403.",
  request: { params: UserParams, ...jsonBody(PasswordInput) },
  responses: { 200: jsonResponse(MessageBody, "Changed") },
});

export const resetSecondFactorRoute = apiRoute({
  method: "post",
  path: "/users/{id}/second-factor/reset",
  operationId: "resetUserSecondFactor",
  tag,
  ability: "users.write",
  summary: "Remove a user's second factor",
  description:
    "For a user who lost their authenticator and recovery codes: removes their TOTP secret and recovery codes, recorded as user.mfa_reset " +
    "(and a user.mfa_changed event). When the settings' mfa.required_for covers them, they enrol again at their next sign-in. " +
    "409 when the user has no second factor; 403 for a user whose role grants more than the caller holds.",
  request: { params: UserParams },
  responses: {
    200: jsonResponse(MessageBody, "Removed"),
    409: jsonResponse(MessageBody, "The user has no second factor"),
  },
});
