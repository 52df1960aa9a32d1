// The module's public surface: what the rest of the app may use. Other folders import the module only
// through this file (.dependency-cruiser.cjs); a file inside the module imports its siblings directly.
export { builtinTemplatesByVendor, seedBuiltinTemplates } from "./builtins.ts";
export type { BuiltinTemplate } from "./builtins.ts";
export { copyTemplate } from "./copy.ts";
export { inventoryModels } from "./inventory-models.ts";
export type { InventoryModel, InventoryModels } from "./inventory-models.ts";
export { registerTemplateRoutes } from "./handlers.ts";
export { RENDER_MAX_CHARS } from "./routes.ts";
export { NetconfReplyError, describeRpcError, netconfConfigText, rpcErrorsOf } from "./netconf-xml.ts";
export { previewTemplate } from "./preview.ts";
export { renderStored } from "./render.ts";
export type { Rendered, RenderedMask } from "./render.ts";
export { templatesResource } from "./resource.ts";
export { storedTextAndSecrets } from "./stored-secrets.ts";
export { compileTemplatePattern } from "./template-patterns.ts";
export { parseTemplate } from "./template-schema.ts";
export type { ConnectionTemplate, DetectSection, InventorySource, PushSection } from "./template-schema.ts";
export {
  comparableText,
  implausibleConfiguration,
  maskSecrets,
  removeSecrets,
  storedText,
  stripAnsi,
} from "./template-text.ts";
export { findGenericSecrets } from "./secret-grammar.ts";
