package pgstore

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	"github.com/jmoiron/sqlx"
)

// scanned is a row type that selectRows reads: fields gives pointers to
// the fields that have a db tag, in the order of their tags (embedded
// structs in place), and columns those tags (columnsOf, worked out once),
// which are the query's columns in order.
type scanned[T any] interface {
	*T
	fields() []any
	columns() []string
}

// selectRows runs stmt and reads its rows as Ts through their fields:
// what sqlx's Select does by reflection on every row, which was most of
// the Go side of a batch of the job queue. It refuses a query whose
// columns are not T's db tags in order (columnsOf), so a row is never read
// into the wrong fields. want is how many rows the caller expects, the
// answer's first capacity.
func selectRows[T any, P scanned[T]](ctx context.Context, stmt *sqlx.Stmt, want int, args ...any) ([]T, error) {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var r T
	if names := P(&r).columns(); !slices.Equal(cols, names) {
		return nil, fmt.Errorf("pgstore: a query's columns %v are not those of %T, %v", cols, r, names)
	}
	dest := P(&r).fields()
	out := make([]T, 0, want)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// columnsOf lists the db tags of T's fields in order, those of an embedded
// struct in its place: the columns selectRows reads into a T.
func columnsOf[T any]() []string { return tags(reflect.TypeFor[T](), nil) }

// The columns of each row type that selectRows reads.
var (
	slotRowColumns       = columnsOf[slotRow]()
	jobRowColumns        = columnsOf[jobRow]()
	takeRowColumns       = columnsOf[takeRow]()
	finishRowColumns     = columnsOf[finishRow]()
	finishTakeRowColumns = columnsOf[finishTakeRow]()
)

func tags(t reflect.Type, out []string) []string {
	for f := range t.Fields() {
		if tag := f.Tag.Get("db"); tag != "" {
			out = append(out, tag)
		} else if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = tags(f.Type, out)
		}
	}
	return out
}
