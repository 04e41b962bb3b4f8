package redisstore

// JobTextOf writes items as lib.lua's job_text does, for the external
// tests.
var JobTextOf = jobTextOf
