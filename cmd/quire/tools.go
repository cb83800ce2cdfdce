package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"quire/fold/module"
	"quire/ledger"
	"quire/words/refusal"
)

// `quire tools install|find`: the TypeScript compiler that checks pages'
// modules at save. An installed quire outside the source tree has no
// .tools/ beside it; `quire tools install` puts typescript@7 into the
// user's cache directory with npm, the last place the lookup looks
// (fold/module.Find).

func toolsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name: "tools", Usage: "the TypeScript compiler (tsc of typescript@7) that checks pages' modules at save",
		Subcommands: []*cli.Command{
			{
				Name: "install", Usage: "install typescript@7 with npm into the user's cache directory (" + module.CacheDir() + ")",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					npm, err := exec.LookPath("npm")
					if err != nil {
						return refusal.New(refusal.Unavailable, "npm is needed to install typescript@7 and is not on the PATH: install Node.js and npm (apt-get install nodejs npm, brew install node)")
					}
					dir := module.CacheDir()
					if err := os.MkdirAll(dir, 0o755); err != nil {
						return err
					}
					pkg := filepath.Join(dir, "package.json")
					if _, err := os.Stat(pkg); err != nil {
						if err := os.WriteFile(pkg, []byte("{\"private\":true}\n"), 0o644); err != nil {
							return err
						}
					}
					fmt.Fprintf(e.err, "quire: npm install typescript@7 in %s\n", dir)
					cmd := exec.CommandContext(c.Context, npm, "install", "--no-audit", "--no-fund", "typescript@7")
					cmd.Dir, cmd.Stdout, cmd.Stderr = dir, e.err, e.err
					if err := cmd.Run(); err != nil {
						return refusal.New(refusal.Unavailable, "npm install typescript@7 in %s failed: %v", dir, err)
					}
					return showCompiler(e, c, "")
				},
			},
			{
				Name: "find", Usage: "say which tsc a save would use, or every place looked when there is none",
				Flags: []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error {
					// The vault's setting, when the command runs in (or
					// --vault names) a vault.
					setting := ""
					if l, err := ledger.Open(c.String("vault")); err == nil {
						if cfg, err := l.Config(); err == nil && cfg.TSC != "" {
							setting = cfg.TSC
							if !filepath.IsAbs(setting) {
								setting = filepath.Join(l.Root(), setting)
							}
						}
						l.Close()
					}
					return showCompiler(e, c, setting)
				},
			},
		},
	}
}

func showCompiler(e *env, c *cli.Context, setting string) error {
	comp, err := module.Find("", setting)
	if err != nil {
		return refusal.New(refusal.Unavailable, "%s", err.Error())
	}
	if c.Bool("json") {
		return e.printJSON(map[string]string{"path": comp.Path, "lib_dir": comp.LibDir})
	}
	fmt.Fprintf(e.out, "tsc: %s\n", comp.Path)
	return nil
}
