// The bridge's own paths, named once (app.ts routes them; pages, push and discovery link to them).
export const PATHS = {
  discovery: '/.well-known/openid-configuration',
  asMetadata: '/.well-known/oauth-authorization-server',
  authorize: '/authorize',
  token: '/token',
  userinfo: '/userinfo',
  jwks: '/jwks.json',
  revoke: '/revoke',
  introspect: '/introspect',
  transaction: '/t/',
  reference: '/r/',
  login: '/login',
  account: '/account',
  developers: '/developers',
  health: '/health',
  rotate: '/operator/keys/rotate',
  suspend: '/operator/clients/suspend',
} as const;
