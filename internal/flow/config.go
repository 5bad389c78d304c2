package flow

import "time"

// Config tunes the engine. The zero value of every field means its default,
// so Config{} is a complete configuration that behaves like Zeek's defaults.
type Config struct {
	// MaxConns caps the connection table. When a new connection would
	// exceed it, one is evicted as for MaxMemory. Default 1<<20.
	MaxConns int

	// MaxMemory is the memory budget of the engine and its handler
	// (default 256 MiB): connections, each counted at ConnMemory bytes
	// plus ConnCost plus what the handler charges for it (Engine.Charge),
	// out-of-order segments (within MaxBuffer) and fragment buffers (within
	// MaxFragBuffer). When a new connection would exceed it, or MaxConns,
	// the connection idle longest is evicted first (of the connections
	// heading each timer list, the one whose last packet is oldest):
	// EndConn with EndEvicted, counted in Stats.Evictions. When
	// out-of-order data would exceed it, holes are forced as for MaxBuffer.
	// MaxBuffer and MaxFragBuffer are lowered to a third and an eighth of
	// a budget too small for them.
	MaxMemory int64
	// ConnCost is what the handler holds for every connection (its own
	// state, allocated at BeginConn), counted against MaxMemory.
	ConnCost int

	// Inactivity timeouts, as Zeek's tcp_inactivity_timeout (5 min),
	// udp_inactivity_timeout (1 min) and icmp_inactivity_timeout (1 min).
	// Zeek applies the UDP timeout to TCP connections still in their
	// handshake; so does the engine.
	TCPInactivity, UDPInactivity, ICMPInactivity time.Duration
	// DNSInactivity is the inactivity timeout of UDP connections to a DNS
	// port (53, 137, 5353, 5355): Zeek's DNS analyzer ends them after its
	// dns_session_timeout (10 s).
	DNSInactivity time.Duration
	// TCPCloseDelay is how long a TCP connection stays in the table after
	// it closed (FIN from both sides, a RST, or a FIN from a side whose peer
	// never spoke), so that late packets still count: Zeek's
	// tcp_close_delay (5 s).
	TCPCloseDelay time.Duration
	// TCPAttemptTimeout ends a connection attempt (SYN seen, no reply) this
	// long after its SYN: Zeek's tcp_attempt_delay (5 s).
	TCPAttemptTimeout time.Duration

	// MaxFlowBuffer caps the memory one direction of a TCP connection may
	// hold in out-of-order segments (default 1 MiB): each segment counts
	// its buffer's capacity and its bookkeeping, not only its payload, so
	// that tiny segments cannot hold more than the cap says. When it bites,
	// the oldest hole is declared lost: a Gap is reported and buffered data
	// after it is delivered. Stats.FlowCapHits counts it.
	MaxFlowBuffer int
	// MaxBuffer caps the memory out-of-order segments of all connections
	// hold together, counted the same way (default 64 MiB). When it bites,
	// the direction that started buffering first is flushed the same way.
	// Stats.GlobalCapHits counts it.
	MaxBuffer int

	// FragTimeout drops an IP datagram whose fragments did not all arrive
	// within this time of its first fragment (default 30 s, Linux's
	// ipfrag_time; Zeek keeps fragments without limit).
	FragTimeout time.Duration
	// MaxFragDatagrams caps the datagrams being reassembled at once
	// (default 4096), and MaxFragBuffer the memory they hold (default 16
	// MiB): a datagram's buffer reaches as far as the highest offset of its
	// fragments, and that capacity counts, however few bytes arrived. The
	// oldest datagram is dropped when a fragment would exceed either, and
	// Stats.FragCapHits counts it.
	MaxFragDatagrams, MaxFragBuffer int
	// MaxFragsPerDatagram caps the fragments of one datagram (default 128).
	MaxFragsPerDatagram int

	// ServerPorts is the likely-server-port set used to pick the originator
	// of connections seen without their SYN (Zeek's likely_server_ports).
	// Nil means DefaultServerPorts().
	ServerPorts *PortSet

	// HashSeed seeds the keyed hash of the connection table. Zero, the
	// default, draws a random seed for each Engine, so that no trace can be
	// made whose connections all land in one chain of the table (hash
	// flooding); set it to reproduce a run exactly, down to the table's
	// layout. Outputs never depend on it.
	HashSeed uint64

	// VerifyChecksums drops TCP, UDP and ICMP packets with a bad checksum
	// and records Zeek's 'C'/'c' history letters, as Zeek does by default.
	// It is off by default because captures taken on the sending host
	// (loopback, checksum offload) carry checksums the NIC never filled in,
	// and tshark, the other reference, does not check them either
	// (Zeek's -C).
	VerifyChecksums bool
}

// Defaults of Config.
const (
	DefaultMaxConns            = 1 << 20
	DefaultMaxMemory           = 256 << 20
	DefaultTCPInactivity       = 5 * time.Minute
	DefaultUDPInactivity       = time.Minute
	DefaultICMPInactivity      = time.Minute
	DefaultDNSInactivity       = 10 * time.Second
	DefaultTCPCloseDelay       = 5 * time.Second
	DefaultTCPAttemptTimeout   = 5 * time.Second
	DefaultMaxFlowBuffer       = 1 << 20
	DefaultMaxBuffer           = 64 << 20
	DefaultFragTimeout         = 30 * time.Second
	DefaultMaxFragDatagrams    = 4096
	DefaultMaxFragBuffer       = 16 << 20
	DefaultMaxFragsPerDatagram = 128
)

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	setInt := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	setInt(&c.MaxConns, DefaultMaxConns)
	if c.MaxMemory <= 0 {
		c.MaxMemory = DefaultMaxMemory
	}
	setDur(&c.TCPInactivity, DefaultTCPInactivity)
	setDur(&c.UDPInactivity, DefaultUDPInactivity)
	setDur(&c.ICMPInactivity, DefaultICMPInactivity)
	setDur(&c.DNSInactivity, DefaultDNSInactivity)
	setDur(&c.TCPCloseDelay, DefaultTCPCloseDelay)
	setDur(&c.TCPAttemptTimeout, DefaultTCPAttemptTimeout)
	setInt(&c.MaxFlowBuffer, DefaultMaxFlowBuffer)
	setInt(&c.MaxBuffer, DefaultMaxBuffer)
	setDur(&c.FragTimeout, DefaultFragTimeout)
	setInt(&c.MaxFragDatagrams, DefaultMaxFragDatagrams)
	setInt(&c.MaxFragBuffer, DefaultMaxFragBuffer)
	setInt(&c.MaxFragsPerDatagram, DefaultMaxFragsPerDatagram)
	if c.MaxBuffer < c.MaxFlowBuffer {
		c.MaxBuffer = c.MaxFlowBuffer
	}
	c.MaxBuffer = int(min(int64(c.MaxBuffer), c.MaxMemory/3))
	c.MaxFlowBuffer = min(c.MaxFlowBuffer, c.MaxBuffer)
	c.MaxFragBuffer = int(min(int64(c.MaxFragBuffer), c.MaxMemory/8))
	if c.ServerPorts == nil {
		c.ServerPorts = DefaultServerPorts()
	}
	return c
}

// PortSet is a set of TCP and UDP ports. The zero value is empty.
type PortSet struct {
	tcp, udp [65536 / 64]uint64
}

// Add puts port of protocol proto (ProtoTCP or ProtoUDP) into the set;
// other protocols are ignored.
func (s *PortSet) Add(proto uint8, port uint16) {
	if b := s.bits(proto); b != nil {
		b[port/64] |= 1 << (port % 64)
	}
}

// Has reports whether port of protocol proto is in the set.
func (s *PortSet) Has(proto uint8, port uint16) bool {
	if b := s.bits(proto); b != nil {
		return b[port/64]&(1<<(port%64)) != 0
	}
	return false
}

func (s *PortSet) bits(proto uint8) *[65536 / 64]uint64 {
	switch proto {
	case ProtoTCP:
		return &s.tcp
	case ProtoUDP:
		return &s.udp
	}
	return nil
}

// defaultTCPServerPorts and defaultUDPServerPorts are the ports Zeek's base
// scripts add to likely_server_ports (each protocol's main.zeek does
// "redef likely_server_ports += { ports }"): HTTP and DNS first, the
// analyzers wirebench cares about, then the other protocols Zeek ships.
var (
	defaultTCPServerPorts = []uint16{
		80, 81, 631, 1080, 3128, 8000, 8080, 8888, // HTTP
		53,       // DNS
		21, 2811, // FTP, GridFTP
		22,      // SSH
		25, 587, // SMTP
		79,      // Finger
		88, 750, // Kerberos
		110,      // POP3
		135,      // DCE-RPC
		139, 445, // SMB
		143,       // IMAP
		389, 3268, // LDAP
		443, 563, 585, 614, 636, 989, 990, 992, 993, 995, 5223, // SSL/TLS
		502,        // Modbus
		1434, 3306, // MySQL
		1883,       // MQTT
		3389,       // RDP
		5222, 5269, // XMPP
		5432,                   // PostgreSQL
		6379,                   // Redis
		6666, 6667, 6668, 6669, // IRC
		20000, // DNP3
	}
	defaultUDPServerPorts = []uint16{
		53, 137, 5353, 5355, // DNS, NetBIOS name service, mDNS, LLMNR
		67, 547, // DHCP, DHCPv6
		88, 750, // Kerberos
		123,      // NTP
		161, 162, // SNMP
		389, 3268, // LDAP
		514,        // Syslog
		1812,       // RADIUS
		2123, 2152, // GTPv1
		3478,  // STUN
		3544,  // Teredo
		4789,  // VXLAN
		5060,  // SIP
		5072,  // AYIYA
		6081,  // Geneve
		20000, // DNP3
	}
)

// DefaultServerPorts returns a new set holding the ports of Zeek's default
// likely_server_ports.
func DefaultServerPorts() *PortSet {
	s := new(PortSet)
	for _, p := range defaultTCPServerPorts {
		s.Add(ProtoTCP, p)
	}
	for _, p := range defaultUDPServerPorts {
		s.Add(ProtoUDP, p)
	}
	return s
}
