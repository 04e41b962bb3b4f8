package redisstore

import (
	"fmt"
	"regexp"
	"strings"
)

// luaUnit is one top-level local of the helpers: its names and its text,
// with the comment lines right above it.
type luaUnit struct {
	names []string
	text  string
}

// luaUnits splits helpers into their top-level locals: a "local function"
// up to the next "end" in the first column (or on its own line when it
// ends there), or a one-line "local a, b = …". Comment lines belong to the
// local below them; a comment a blank line separates from any is dropped.
func luaUnits(helpers string) ([]luaUnit, error) {
	lines := strings.Split(helpers, "\n")
	var units []luaUnit
	var comment []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "--"):
			comment = append(comment, l)
			continue
		case strings.TrimSpace(l) == "":
			comment = nil
			continue
		}
		var u luaUnit
		switch rest, ok := strings.CutPrefix(l, "local function "); {
		case ok:
			name, _, found := strings.Cut(rest, "(")
			if !found {
				return nil, fmt.Errorf("line %d: no parameter list: %q", i+1, l)
			}
			j := i
			if !strings.HasSuffix(l, " end") {
				for j < len(lines) && lines[j] != "end" {
					j++
				}
				if j == len(lines) {
					return nil, fmt.Errorf("line %d: function %s has no end", i+1, name)
				}
			}
			u = luaUnit{names: []string{name}, text: strings.Join(append(comment, lines[i:j+1]...), "\n")}
			i = j
		case strings.HasPrefix(l, "local ") && strings.Contains(l, "="):
			names, _, _ := strings.Cut(strings.TrimPrefix(l, "local "), "=")
			for _, n := range strings.Split(names, ",") {
				u.names = append(u.names, strings.TrimSpace(n))
			}
			u.text = strings.Join(append(comment, l), "\n")
		default:
			return nil, fmt.Errorf("line %d: not a top-level local: %q", i+1, l)
		}
		units = append(units, u)
		comment = nil
	}
	return units, nil
}

var (
	luaIdent   = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	luaComment = regexp.MustCompile(`--[^\n]*`)
)

// luaNames adds the identifiers code uses, its comments left out, to set.
func luaNames(code string, set map[string]bool) {
	for _, n := range luaIdent.FindAllString(luaComment.ReplaceAllString(code, ""), -1) {
		set[n] = true
	}
}

// linkScript is the script name as Redis runs it: the helpers among units
// that src uses, directly or through another helper, in their order, then
// src. A helper can only use those above it, so one pass from the last
// finds them all. Every helper a script leaves out is a closure or a table
// Redis does not build on each of its calls.
func linkScript(units []luaUnit, name, src string) string {
	used := map[string]bool{}
	luaNames(src, used)
	keep := make([]bool, len(units))
	for i := len(units) - 1; i >= 0; i-- {
		for _, n := range units[i].names {
			if used[n] {
				keep[i] = true
				luaNames(units[i].text, used)
				break
			}
		}
	}
	var b strings.Builder
	for i, u := range units {
		if keep[i] {
			b.WriteString(u.text)
			b.WriteString("\n\n")
		}
	}
	b.WriteString("-- " + name + "\n")
	b.WriteString(src)
	return b.String()
}
