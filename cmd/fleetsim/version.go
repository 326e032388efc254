package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/fleetsim/fleetsim/experiments"
)

const versionHelp = `usage: fleetsim version | fleetsim --version

Print the module version and the VCS revision this binary was built from
("-dirty" when the working tree had changes), and the Go version.
`

// cmdVersion is `fleetsim version` and `fleetsim --version`.
func cmdVersion(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, stdout, versionHelp)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("version takes no arguments")
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprintln(stdout, versionText(bi, ok))
	return nil
}

// versionText is "fleetsim VERSION REVISION[-dirty] GOVERSION" from the
// build information: the module version ("(devel)" when built from a
// checkout) and the VCS revision ("unknown" when the build was not stamped:
// go run, go test, -buildvcs=false, or no build information at all).
func versionText(bi *debug.BuildInfo, ok bool) string {
	version, revision := experiments.VersionOf(bi, ok)
	goVersion := "unknown"
	if ok && bi != nil && bi.GoVersion != "" {
		goVersion = bi.GoVersion
	}
	return fmt.Sprintf("fleetsim %s %s %s", version, revision, goVersion)
}
