// Command ctxls is the ctxls daemon and its command-line interface. Editors
// start it as "ctxls serve" (the default) and speak LSP over stdio; the
// sessions subcommands work on the same store.
package main

import (
	"os"

	"github.com/ctxls/ctxls/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
