export type BuiltinPolicy = { key: string; name: string; description: string; vendor: string; definition: string };
export const BUILTIN_POLICIES: BuiltinPolicy[] = [];
