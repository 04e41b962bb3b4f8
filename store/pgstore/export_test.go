package pgstore

// JobQueueQuery is one job-queue query with sample arguments.
type JobQueueQuery struct {
	Name string
	SQL  string
	Args []any
}

// JobQueueQueriesForTest returns every job-queue query, for plan checks.
func JobQueueQueriesForTest() []JobQueueQuery {
	var out []JobQueueQuery
	for k, q := range nextSlotQueries {
		var args []any
		if k[0] {
			args = append(args, "critic")
		}
		if k[1] {
			args = append(args, "law")
		}
		if k[2] {
			args = append(args, 0.5, 0.25)
		}
		out = append(out, JobQueueQuery{Name: nameOf(k), SQL: q, Args: args})
	}
	return out
}

func nameOf(k [3]bool) string {
	n := "oldest"
	if k[2] {
		n = "random"
	}
	if k[0] {
		n += "+role"
	}
	if k[1] {
		n += "+domain"
	}
	return n
}
