package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/edihub/edihub/hub/forensics"
	ejs "github.com/edihub/edihub/jetstream"
	"github.com/rs/zerolog"
)

// startSandboxChild runs `<exe> sandbox --server URL [--config FILE]` as
// a supervised child of serve: a separate process with its own NATS
// connection (a bulkhead — the analysis children it forks are its own, and
// whatever they do cannot touch the hub's memory). If it dies it is
// started again with backoff (1s doubling to 30s, reset after a minute of
// life); on ctx it gets SIGTERM, then SIGKILL after 10s. wait blocks until
// it is gone. With the section disabled it does nothing.
//
// Credentials reach it as file paths and the user name on its command
// line and secrets (a password, a URL with one) in its environment only
// (childNATS): /proc/<pid>/cmdline is readable by every local user.
func startSandboxChild(ctx context.Context, cfg forensics.Config, exe, natsURL string, auth ejs.ClientAuth, configPath, dataDir string, log zerolog.Logger) (wait func(), err error) {
	log = log.With().Str("component", "sandbox").Logger()
	if !cfg.IsEnabled() {
		log.Info().Msg("forensic sandbox worker disabled (sandbox.enabled: false)")
		return func() {}, nil
	}
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("sandbox worker: find own executable: %w", err)
		}
	}
	natsArgs, natsEnv := childNATS(natsURL, auth)
	args := append([]string{"sandbox"}, natsArgs...)
	if log.GetLevel() != zerolog.NoLevel && log.GetLevel() != zerolog.Disabled {
		args = append(args, "--log-level", log.GetLevel().String())
	}
	if configPath != "" {
		args = append(args, "--config", configPath)
	}
	args = append(args, "--data", dataDir) // the worker signs its audit events and checks x-hub-mac with serve's key
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		superviseSandbox(ctx, exe, args, natsEnv, log)
	}()
	return wg.Wait, nil
}

func superviseSandbox(ctx context.Context, exe string, args, env []string, log zerolog.Logger) {
	backoff := time.Second
	for ctx.Err() == nil {
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr // its own log lines, tagged component=forensics
		cmd.SysProcAttr = workerProcAttr()
		if len(env) > 0 {
			cmd.Env = append(os.Environ(), env...)
		}
		started := time.Now()
		if err := cmd.Start(); err != nil {
			log.Error().Err(err).Msg("cannot start the sandbox worker")
		} else {
			log.Info().Int("pid", cmd.Process.Pid).Msg("sandbox worker started")
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				log.Error().Err(err).Dur("lived", time.Since(started)).Msg("sandbox worker exited; restarting")
			case <-ctx.Done():
				_ = cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					_ = cmd.Process.Kill()
					<-done
				}
				log.Info().Msg("sandbox worker stopped")
				return
			}
		}
		if time.Since(started) > time.Minute {
			backoff = time.Second
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}
