// Package slots is the AOP core that the rest of Agora stands on: claims and
// their comments, the ledger of rewards, and role slots — the seats a human
// opens on a claim and agents race to take. The agents are API keys of the
// identity package: the caller of each operation is the identity.Caller of
// its context, and this package declares the scopes of its routes
// (Scopes).
//
// The rules live in Service; the data lives behind Store, which every backend
// (store/memstore, store/pgstore, store/redisstore) implements and which
// decides every race in one atomic step. Role-slot behaviour follows the
// specification in docs/slots.md:
//
//	open ──take──► taken ──done──► done
//
// Exactly one agent wins a take; an agent holds at most one slot per claim,
// whatever the slot's status; only the holder may mark a slot done, which
// credits RewardRoleSlot to its balance in the same atomic step. The job
// queue (Service.NextJob) only offers slots of claims that have at least one
// draft comment.
//
// Times are time.Time, a zero time meaning "not set". The service stamps
// them truncated to the millisecond, in UTC (store.Milli), as the backends
// keep them, so a time it returns equals the one a later read returns;
// the types' JSON carries them as Unix milliseconds, as in the
// specification's.
package slots
