package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/testdb"
)

// The versions of the tools the tests below run: pinned, so a new release
// of either cannot change what the tests prove.
const (
	oapiCodegen        = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	oapiCodegenRuntime = "github.com/oapi-codegen/runtime v1.9.0"
)

// servedDocument is the document as a host serves it at /openapi.json.
func servedDocument(t *testing.T) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	httpapi.OpenAPIHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/openapi.json", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.Bytes()
}

// TestOpenAPILintsClean: the Redocly CLI's recommended rules find no error
// and no warning in the served document (servers, license, operation IDs,
// security on every operation, 4xx answers). The CLI is $AGORA_REDOCLY, or
// redocly on PATH (.ci/run installs it).
func TestOpenAPILintsClean(t *testing.T) {
	t.Parallel()
	redocly := os.Getenv("AGORA_REDOCLY")
	if redocly == "" {
		redocly, _ = exec.LookPath("redocly")
	}
	if redocly == "" {
		testdb.Unavailable(t, "no Redocly CLI: set AGORA_REDOCLY or put redocly on PATH (npm install @redocly/cli)")
	}
	dir := t.TempDir()
	doc := filepath.Join(dir, "openapi.json")
	require.NoError(t, os.WriteFile(doc, servedDocument(t), 0o600))
	cmd := exec.Command(redocly, "lint", "--extends=recommended", "--format=stylish", doc)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "redocly lint:\n%s", out)
	require.NotRegexp(t, regexp.MustCompile(`(?m)^\s+\d+:\d+\s+(error|warning)\s`), string(out), "redocly lint reports problems:\n%s", out)
}

// TestOpenAPIGeneratesAClient: oapi-codegen makes a Go client of the
// served document that compiles, names its methods after the operation
// IDs, and asks a real server for its health through the generated code.
func TestOpenAPIGeneratesAClient(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds oapi-codegen and a module of its client")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		testdb.Unavailable(t, "no go command on PATH: %v", err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	run := func(in string, args ...string) ([]byte, error) {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = in
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOBIN="+bin)
		return cmd.CombinedOutput()
	}
	// Getting the tool and the client's one dependency needs the module
	// proxy or a module cache that holds them: without either there is
	// nothing to test here, which only CI must not accept.
	if out, err := run(dir, "install", oapiCodegen); err != nil {
		testdb.Unavailable(t, "cannot install %s: %v\n%s", oapiCodegen, err, out)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "openapi.json"), servedDocument(t), 0o600))
	client := filepath.Join(dir, "client")
	require.NoError(t, os.MkdirAll(filepath.Join(client, "agora"), 0o700))
	cmd := exec.Command(filepath.Join(bin, "oapi-codegen"), "-generate", "types,client", "-package", "agora",
		"-o", filepath.Join(client, "agora", "client.gen.go"), filepath.Join(dir, "openapi.json"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "oapi-codegen:\n%s", out)
	gen, err := os.ReadFile(filepath.Join(client, "agora", "client.gen.go"))
	require.NoError(t, err)
	for _, method := range []string{"TakeSlotWithResponse", "ListGamesWithResponse", "CreateClaimWithResponse", "GetHealthWithResponse"} {
		require.Contains(t, string(gen), ") "+method+"(", "a method named after the operation ID")
	}
	require.NotContains(t, string(gen), "UnderscoreId")
	require.NotRegexp(t, regexp.MustCompile(`(?m)^type Httpapi`), string(gen), "a type named after the httpapi package or an unexported Go type")

	require.NoError(t, os.WriteFile(filepath.Join(client, "go.mod"), []byte("module example.com/agoraclient\n\ngo 1.25\n\nrequire "+oapiCodegenRuntime+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(client, "main.go"), []byte(`package main

import (
	"context"
	"fmt"
	"os"

	"example.com/agoraclient/agora"
)

func main() {
	c, err := agora.NewClientWithResponses(os.Args[1])
	if err != nil {
		panic(err)
	}
	r, err := c.GetHealthWithResponse(context.Background())
	if err != nil {
		panic(err)
	}
	if r.JSON200 == nil {
		panic(fmt.Sprintf("GET /healthz: %d %s", r.StatusCode(), r.Body))
	}
	fmt.Printf("%s %s\n", r.JSON200.Status, r.JSON200.Store)
}
`), 0o600))
	if out, err := run(client, "mod", "tidy"); err != nil {
		testdb.Unavailable(t, "cannot get %s: %v\n%s", oapiCodegenRuntime, err, out)
	}
	out, err = run(client, "build", "-o", filepath.Join(bin, "agoraclient"), ".")
	require.NoError(t, err, "the generated client does not compile:\n%s", out)

	srv := httptest.NewServer(httpapi.HealthHandler("memory", nil))
	t.Cleanup(srv.Close)
	out, err = exec.Command(filepath.Join(bin, "agoraclient"), srv.URL).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "ok memory", strings.TrimSpace(string(out)))
}
