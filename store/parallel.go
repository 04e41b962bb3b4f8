package store

// Parallel is implemented by a store that knows how many calls its server
// carries out at once. The Services that batch their calls (slots and
// identity) keep at most one batch more than that in flight: the extra one
// keeps the server busy while the last batch's answer travels back, and
// more would only split the callers into smaller batches. Redis runs one
// script at a time; PostgreSQL runs as many statements as the pool holds
// connections. A store bounded by neither does not implement it.
type Parallel interface {
	// Parallelism reports how many calls the server carries out at once;
	// 0 means unknown, as from a wrapper whose store does not say.
	Parallelism() int
}

// ParallelismOf is st's Parallelism where st implements Parallel, else 0:
// what a wrapper of a store reports for the store it wraps.
func ParallelismOf(st any) int {
	if p, ok := st.(Parallel); ok {
		return p.Parallelism()
	}
	return 0
}
