// Package identity is who calls Agora: API keys and their scopes, the
// admin key, the device login by which the original's `aop setup` gets a
// key, and the one authenticator every API goes through.
//
// The domains (slots, prism, arena, discussion) each declare their own
// scopes; a host tells the Service which scopes keys may carry with
// WithScopes. An edge authenticates a request once and puts its Caller in
// the context (NewContext); every domain service reads it from there
// (FromContext) and decides itself who may act, so a Go host, an HTTP
// agent and an MCP agent reach every service the same way.
//
// The rules live in Service; the data lives behind Store, which every
// backend (store/memstore, store/pgstore, store/redisstore) implements.
// Key secrets are never stored: only their SHA-256, compared in constant
// time.
package identity
