package jetstream

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"
)

// ServerOptions configure the embedded server. The zero value is usable:
// 127.0.0.1:4222, store in ./data/jetstream.
type ServerOptions struct {
	// DataDir holds the JetStream store (DataDir/jetstream).
	DataDir string
	// Listen is HOST:PORT for NATS clients; port -1 picks a free port.
	Listen string
	// MaxPayload bounds one message; EDI interchanges and their JSON views
	// are larger than NATS's 1 MB default.
	MaxPayload int32
	// ReadyTimeout bounds the wait for the server to accept clients.
	ReadyTimeout time.Duration
	// Logger receives the server's own log lines (component=nats-server).
	Logger *zerolog.Logger
	// Users, when any, turn authentication on: each gets the permissions
	// of its role (RolePermissions), the same as configs/nats-permissions.conf.
	Users []AuthUser
	// AuthNames are the stream and bucket names the permissions name.
	AuthNames AuthNames
	// Name is the server's name ("edihub"); every node of a cluster needs
	// its own.
	Name string
	// Cluster, when enabled, makes this server a node of a NATS cluster.
	Cluster ClusterOptions
}

func (o *ServerOptions) setDefaults() {
	if o.DataDir == "" {
		o.DataDir = "data"
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:4222"
	}
	if o.MaxPayload == 0 {
		o.MaxPayload = 32 << 20
	}
	if o.Name == "" {
		o.Name = "edihub"
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 10 * time.Second
	}
}

// Validate reports a setting that cannot work.
func (o *ServerOptions) Validate() error {
	if _, _, err := splitHostPort(o.Listen); err != nil {
		return err
	}
	if o.MaxPayload < 0 || o.MaxPayload > 64<<20 {
		return fmt.Errorf("max payload %d: must be between 1 and 64 MiB", o.MaxPayload)
	}
	if strings.ContainsAny(o.Name, " \t") {
		return fmt.Errorf("server name %q may not contain spaces", o.Name)
	}
	return o.Cluster.Validate()
}

func splitHostPort(hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, fmt.Errorf("listen address %q: %w", hp, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < -1 || port > 65535 {
		return "", 0, fmt.Errorf("listen address %q: bad port", hp)
	}
	return host, port, nil
}

// StartServer starts an embedded nats-server with JetStream and waits until
// it accepts clients. Stop it with Shutdown and WaitForShutdown.
func StartServer(opts *ServerOptions) (*server.Server, error) {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	o.setDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	host, port, _ := splitHostPort(o.Listen)
	sopts := &server.Options{}
	if len(o.Users) > 0 {
		// The accounts config an external server gets (AccountsConf),
		// parsed by the server's own parser; passwords are set on the
		// parsed users, never written into the text.
		if err := applyAccounts(sopts, o.Users, o.AuthNames); err != nil {
			return nil, err
		}
	}
	sopts.ServerName = o.Name
	sopts.Host, sopts.Port = host, port
	sopts.JetStream = true
	sopts.StoreDir = filepath.Join(o.DataDir, "jetstream")
	sopts.MaxPayload = o.MaxPayload
	sopts.NoSigs = true // the hub owns signal handling and drains first
	sopts.NoLog = o.Logger == nil
	if o.Cluster.Enabled() {
		if err := o.Cluster.apply(sopts); err != nil {
			return nil, err
		}
	}
	s, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("configure embedded nats server: %w", err)
	}
	if o.Logger != nil {
		l := o.Logger.With().Str("component", "nats-server").Logger()
		s.SetLoggerV2(&serverLogger{l: l}, false, false, false)
	}
	s.Start()
	if !s.ReadyForConnections(o.ReadyTimeout) {
		s.Shutdown()
		return nil, errors.New("embedded nats server not ready in time (is the port " + o.Listen + " already in use?)")
	}
	return s, nil
}

// serverLogger adapts zerolog to nats-server's Logger interface.
type serverLogger struct{ l zerolog.Logger }

func (s *serverLogger) Noticef(format string, v ...any) { noticeLine(s.l, format, v...) }
func (s *serverLogger) Warnf(format string, v ...any)   { s.l.Warn().Msgf(format, v...) }
func (s *serverLogger) Fatalf(format string, v ...any)  { s.l.Error().Msgf(format, v...) }
func (s *serverLogger) Errorf(format string, v ...any)  { s.l.Error().Msgf(format, v...) }
func (s *serverLogger) Debugf(format string, v ...any)  { s.l.Debug().Msgf(format, v...) }
func (s *serverLogger) Tracef(format string, v ...any)  { s.l.Trace().Msgf(format, v...) }
