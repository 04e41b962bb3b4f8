package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agorahq/agora/httpapi"
	"github.com/agorahq/agora/internal/testdb"
)

// readme returns the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	require.NoError(t, err)
	return string(b)
}

// repoRoot is the module's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(here), "..", ".."))
}

// fenced returns the README's fenced blocks of lang, in order.
func fenced(text, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?ms)^```"+lang+"\n(.*?)^```").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestREADMEIsShort: the front page stays a front page; the rest is docs/.
func TestREADMEIsShort(t *testing.T) {
	t.Parallel()
	text := readme(t)
	require.LessOrEqual(t, strings.Count(text, "\n"), 150, "README.md has more than 150 lines")
	require.Contains(t, text, "go get github.com/agorahq/agora")
	for _, m := range regexp.MustCompile(`\]\(((?:docs/)?[\w./-]+\.(?:md|png))\)`).FindAllStringSubmatch(text, -1) {
		_, err := os.Stat(filepath.Join(repoRoot(t), m[1]))
		require.NoError(t, err, "README links %s", m[1])
	}
	_, err := os.Stat(filepath.Join(repoRoot(t), "docs", "console-jobs.png"))
	require.NoError(t, err)
}

// TestREADMEProgramCompiles: the README's whole program builds against
// this checkout (an overlay adds it as a package of the module, so
// nothing is written into the repository).
func TestREADMEProgramCompiles(t *testing.T) {
	t.Parallel()
	var program string
	for _, b := range fenced(readme(t), "go") {
		if strings.HasPrefix(b, "package main") {
			program = b
		}
	}
	require.NotEmpty(t, program, "the README has a whole program")
	goTool, err := exec.LookPath("go")
	if err != nil {
		testdb.Unavailable(t, "no go command: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	require.NoError(t, os.WriteFile(src, []byte(program), 0o600))
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(repoRoot(t), "readmeprogram", "main.go"): src}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o600))
	cmd := exec.Command(goTool, "build", "-overlay", filepath.Join(dir, "overlay.json"), "-o", filepath.Join(dir, "program"), "./readmeprogram")
	cmd.Dir = repoRoot(t)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's program does not build:\n%s", out)
}

// TestREADMECurlWalkthrough runs the README's curl walkthrough, every line
// in order as written, against a fresh server started as the README says
// (only its port differs): no answer is an error, the agent is credited,
// and the one-step routes after it find their seats.
func TestREADMECurlWalkthrough(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		testdb.Unavailable(t, "no curl: %v", err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		testdb.Unavailable(t, "no bash: %v", err)
	}
	var script string
	for _, b := range fenced(readme(t), "sh") {
		if strings.HasPrefix(b, "export ADMIN=") {
			script = b
		}
	}
	require.NotEmpty(t, script, "the README's curl walkthrough")
	admin := regexp.MustCompile(`export ADMIN=(\S+)`).FindStringSubmatch(script)[1]
	require.Contains(t, readme(t), "AGORA_ADMIN_KEY="+admin+" go run ./examples/server -addr 127.0.0.1:8080", "the walkthrough's server")
	base, _ := serve(t, "-admin-key", admin, "-store", "memory", "-quiet")
	script = strings.ReplaceAll(script, "localhost:8080", strings.TrimPrefix(base, "http://"))

	// Each command's answer on a line of its own, so that the check below
	// can tell them apart.
	cmd := exec.Command(bash, "-euo", "pipefail", "-c", "curl() { command "+curl+" \"$@\"; echo; }\n"+script)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var answers []string
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			answers = append(answers, line)
		}
	}
	for _, a := range answers {
		require.NotContains(t, a, `"error"`, "a line of the walkthrough failed:\n%s", out)
	}
	require.Len(t, answers, 10, "every printed answer:\n%s", out)
	require.Contains(t, answers[6], `"balance":10`, "GET /api/v1/me after the done")
	require.Contains(t, answers[9], `"ok":true`, "done-and-take")
	require.Contains(t, answers[9], `"next":null`, "done-and-take with no seat left")
}

// TestDocsNameEveryRoute: each part's page in docs/ names every route of
// its part, as the OpenAPI document lists them.
func TestDocsNameEveryRoute(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]struct {
			Tags []string `json:"tags"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(httpapi.OpenAPI(), &doc))
	pages := map[string]string{"aop": "slots.md", "prism": "prism.md", "arena": "arena.md", "discussion": "discussion.md",
		"agentchat": "agentchat.md", "health": "operations.md"}
	for path, item := range doc.Paths {
		for method, op := range item {
			page, ok := pages[op.Tags[0]]
			require.True(t, ok, "no page for tag %s", op.Tags[0])
			text, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", page))
			require.NoError(t, err)
			require.Contains(t, string(text), path, "docs/%s does not name %s %s", page, strings.ToUpper(method), path)
		}
	}
}

// TestNoSeedCitations: the specifications Agora was built from are not in
// the repository, so neither code nor docs may send a reader to them.
func TestNoSeedCitations(t *testing.T) {
	t.Parallel()
	folder := "seeds" + "/"
	err := filepath.WalkDir(repoRoot(t), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != repoRoot(t) {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		require.NotContains(t, string(b), folder, "%s cites the specifications' folder; say it in docs/ instead", path)
		return nil
	})
	require.NoError(t, err)
}
