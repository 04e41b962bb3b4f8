package httpapi_test

import (
	"os"
	"testing"

	"github.com/agorahq/agora/internal/testdb"
)

// TestMain stops the database servers internal/testdb started for the
// tests, which run on every backend of internal/testbackend.
func TestMain(m *testing.M) { os.Exit(testdb.Main(m)) }
