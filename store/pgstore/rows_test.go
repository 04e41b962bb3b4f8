package pgstore

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/internal/testdb"
)

// TestSelectRowsChecksColumns: selectRows reads rows whose columns are the
// row type's, in order, and refuses a query whose columns are in another
// order, instead of reading one column into another's field.
func TestSelectRowsChecksColumns(t *testing.T) {
	db, err := Open(testdb.PostgresDSN(t), PoolOptions{MaxOpenConns: 2})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	s, ctx := New(db), context.Background()
	const values = `'2'::text AS claim_id, 'critic'::text AS role, 'taken'::text AS status, 'key_1'::text AS api_key_id,
		'ann'::text AS agent_name, ''::text AS agent_avatar_url, 5::bigint AS taken_at, 0::bigint AS done_at, 1::bigint AS created_at,
		0::bigint AS lease_expires_at`
	stmt, err := s.prepared(ctx, `SELECT '1'::text AS id, `+values)
	require.NoError(t, err)
	rows, err := selectRows[slotRow](ctx, stmt, 1)
	require.NoError(t, err)
	require.Equal(t, []slotRow{{ID: "1", ClaimID: "2", Role: "critic", Status: "taken", APIKeyID: "key_1", AgentName: "ann", TakenAt: 5, CreatedAt: 1}}, rows)

	stmt, err = s.prepared(ctx, `SELECT `+values+`, '1'::text AS id`)
	require.NoError(t, err)
	_, err = selectRows[slotRow](ctx, stmt, 1)
	require.ErrorContains(t, err, "columns")
}

// TestFieldsFollowTags: each row type's fields point at its db-tagged
// fields in the order of columnsOf, the order selectRows checks the
// query's columns against.
func TestFieldsFollowTags(t *testing.T) {
	t.Run("slotRow", func(t *testing.T) { fieldsFollowTags[slotRow](t) })
	t.Run("jobRow", func(t *testing.T) { fieldsFollowTags[jobRow](t) })
	t.Run("takeRow", func(t *testing.T) { fieldsFollowTags[takeRow](t) })
	t.Run("finishRow", func(t *testing.T) { fieldsFollowTags[finishRow](t) })
	t.Run("finishTakeRow", func(t *testing.T) { fieldsFollowTags[finishTakeRow](t) })
}

func fieldsFollowTags[T any, P scanned[T]](t *testing.T) {
	var r T
	var tagged []any
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Tag.Get("db") != "" {
				tagged = append(tagged, v.Field(i).Addr().Interface())
			} else if f.Anonymous {
				walk(v.Field(i))
			}
		}
	}
	walk(reflect.ValueOf(&r).Elem())
	require.Equal(t, columnsOf[T](), P(&r).columns())
	require.Len(t, P(&r).columns(), len(tagged))
	fields := P(&r).fields()
	require.Len(t, fields, len(tagged))
	for i, want := range tagged {
		require.Same(t, want, fields[i], "field %d, column %s", i, columnsOf[T]()[i])
	}
}
