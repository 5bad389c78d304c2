// Package tunnel decapsulates the tunnels Zeek's default scripts follow:
// Teredo (UDP 3544, and found by content on other UDP ports), AYIYA (UDP
// 5072), VXLAN (UDP 4789), Geneve (UDP 6081), GTPv1-U (UDP 2152), GRE (IP
// protocol 47, including PPTP's enhanced GRE, and GRE over UDP 4754) and
// IP in IP (protocols 4 and 41).
//
// Each function takes the payload that carries a tunnel (a UDP payload or
// an IP payload) and returns the inner frame as a slice of it, with the
// link type that frame starts with (raw IP or Ethernet), ready for
// capture.Decoder.Decode. Nothing is copied or allocated. A payload that
// is not a valid encapsulation gives an error; the errors are preallocated
// values, so checking traffic that is not a tunnel costs no allocation.
//
// The checks follow Zeek's packet analyzers, so that the same packets are
// decapsulated: Teredo and GTPv1 accept an inner packet only when its IP
// header is valid and its length matches the payload exactly (Zeek's
// IP::ParsePacket), Teredo's content detection is Zeek's DetectProtocol,
// and GRE accepts the versions and protocol types Zeek's GRE analyzer
// accepts. Which connections a tunnel is looked for on, when a tunnel
// counts as confirmed (the service in conn.log) and the tunnel_parents of
// inner connections are the analyzer's business (package
// internal/analyzer).
package tunnel
