package server

import (
	"flag"
	"fmt"
	"strings"
)

// envPrefix starts the name of the environment variable each flag can be
// set by: -store is AGORA_STORE, -batch-wait AGORA_BATCH_WAIT.
const envPrefix = "AGORA_"

// envName is the environment variable of the flag named name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parseFlags sets each flag of fs from its environment variable (envName)
// when that is set, then parses args, which win over the environment. It
// returns flag.ErrHelp for -h and -help.
func parseFlags(fs *flag.FlagSet, args []string, lookup func(string) (string, bool)) error {
	usage := fs.Usage
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Every flag can also be set by its environment variable, %sNAME (-store: %s, -batch-wait: %s);\nthe command line wins.\n", envPrefix, envName("store"), envName("batch-wait"))
		usage()
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v, ok := lookup(envName(f.Name))
		if !ok || err != nil {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
}
