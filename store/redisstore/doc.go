// Package redisstore is Agora's Redis backend, built on go-redis v9. It
// implements slots.Store and passes the same storetest conformance suite as
// memstore, against miniredis and a real Redis server.
//
// # Atomicity
//
// Every operation that checks and then changes state — create a claim, add a
// comment (the first draft puts the claim's open slots in the job queue),
// replace open slots, take, finish (done and credit together), release
// expired leases, create and revoke a key — is one Lua script, embedded from
// this package's lua directory and run with EVALSHA (EVAL when the server
// has not cached it yet). Redis runs a script without interleaving anything
// else, so races are decided by the server, never by check-then-write in Go.
// Reads that touch several keys (a claim's slots, the job queue, listings)
// are scripts too, so they see one consistent state in one round trip.
// Each script carries the helpers of lua/lib.lua it uses and no others, and
// the job queue's scripts answer slots and claims as fixed lists of fields
// (records.go), so that Redis, whose one thread every client waits for,
// does as little per seat as the step allows.
//
// The scripts never call TIME or math.random: "now" and the random pick of
// the job queue come from Go as arguments, so the service's injectable clock
// drives Redis too and miniredis runs stay deterministic.
//
// # Keys
//
// Every key is "{prefix}:…" (prefix "agora" unless WithPrefix says
// otherwise):
//
//	{p}:claims                          zset, every claim ID, score 0
//	{p}:claim:<claim>                   hash _id title body domain createdAt sources protocol
//	                                        authorId authorName jobv [hasDraft] [commentCount]
//	                                        (jobv: the claim and its oldest slots.JobComments comments
//	                                        as a take answers them, one field for the take to read;
//	                                        claims stored before it, or before it was bounded, gain it
//	                                        with their next comment, take or domain write;
//	                                        commentCount: its comments, written by each)
//	{p}:claims:domain:<domain>          zset, the domain's claim IDs, score 0
//	{p}:claims:protocol:<protocol>      zset, the IDs of the claims created under it, score 0
//	{p}:claims:protocols                zset, the names claims were created under, score 0
//	                                        ({p}:claims:protocols:indexed marks it built for claims before it)
//	{p}:claims:protocols:rank           zset, each name's rank member, score 0: 2^53 less its claims,
//	                                        2^52 less its newest claim's createdAt (16 digits each), the name
//	{p}:claims:protocols:ranks          hash name -> its rank member ({p}:claims:protocols:ranked marks
//	                                        the ranking built for claims before it)
//	{p}:comments:<claim>                list of comment JSON, oldest first
//	{p}:commentids:<claim>              set of its comments' IDs (built from the list by the
//	                                        claim's first comment after it was kept)
//	{p}:calibrations:<claim>            list of calibration JSON, oldest first
//	{p}:slots:<claim>                   list of slot IDs, creation order
//	{p}:holders:<claim>                 hash key ID -> slot ID (one seat per agent, any status)
//	{p}:slot:<slot>                     hash _id claimId role status createdAt
//	                                        [apiKeyId agentName agentAvatarUrl takenAt doneAt leaseExpiresAt]
//	{p}:q:all                           zset, open slots of claims with a draft, score 0
//	{p}:q:role:<role>                   the same, one role
//	{p}:q:domain:<domain>               the same, one domain
//	{p}:q:role:<role>:domain:<domain>   the same, one role in one domain
//	{p}:leases                          zset, leased taken slot IDs scored by lease expiry (Unix ms)
//	{p}:keys                            zset, every API key ID, score 0
//	{p}:key:<key>                       hash _id name avatarUrl scopes(JSON) createdAt hash(hex) [revokedAt]
//	{p}:balances                        hash key ID -> balance
//	{p}:marker                          a value WatchForReset looks for: gone means the data was lost
//
// The prefix in braces is a Redis Cluster hash tag: only it is hashed, so
// every key of a store lives in one Cluster slot. That is what lets each
// script run on Cluster at all: a take changes its slot and its claim's
// holders and also removes the slot from the store-wide job-queue indexes,
// and Cluster refuses a script whose keys span slots. A tag per claim would
// not do, since the queue indexes span claims. The price is that one store
// does not spread over several Cluster nodes; stores with different
// prefixes do.
//
// The ID-ordered sets use score 0 so members sort by ID; IDs are
// time-ordered, so ZRANGE 0 0 is the oldest open slot and ZREVRANGEBYLEX
// lists claims newest first from any cursor. The job queue is four indexes
// per open slot, maintained by the scripts that open and close slots, so
// NextOpenSlot costs O(log n) whatever the store holds; a random pick is
// ZCARD then ZRANGE at floor(r*n). For an agent, the pick walks on past the
// slots of claims whose holders hash names it, one step per such slot. No
// operation uses KEYS or SCAN.
//
// # Errors
//
// Scripts fail with an error reply "AGORA <code>", code being the Code of a
// slots.Err* value, and interpretError turns those — and redis.Nil — into
// the exact error values of the slots.Store contract. A cancelled context
// surfaces as an error that errors.Is matches against context.Canceled.
package redisstore
