// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { mailConsumer } from "./consumer.ts";
export { registerMailRoutes, registerMailTestRoute } from "./handlers.ts";
export { MailSubscriptionsPut } from "./routes.ts";
export { setMailSubscriptions, showSubscriptions } from "./subscriptions.ts";
export { sendTestMail } from "./service.ts";
