// Package capture opens capture files (pcap with µs or ns timestamps,
// pcapng with any number of interfaces, either gzip-compressed) and decodes
// their packets down to the transport layer without allocating per packet.
//
// Data flows in three steps, each reusing its buffers:
//
//	r, err := capture.Open("trace.pcap")   // or NewReader(io.Reader, name)
//	d := capture.NewDecoder()
//	var p capture.Packet
//	for {
//		err := r.Next(&p)               // frame: TS, Data, OrigLen, LinkType
//		if err == io.EOF { break }      // clean end; other errors name file and offset
//		err = d.Decode(&p)              // IP and transport fields, zero-copy
//		...
//	}
//
// A Packet's slices point into the Reader's buffer and are valid until the
// next call to Next, or, when the Reader lends its buffers (Reader.Lend),
// while the Packet's Lease is held. Writer writes packets back to a pcap
// file unchanged, keeping the input's link type and timestamp resolution
// (Reader.Header).
//
// # Reading
//
// The format is told by the file's first bytes, never by its name: gzip is
// decompressed on the fly; pcap records (either byte order, µs or ns
// timestamps) and pcapng blocks are checked and used in place in the read
// buffer, so reading a frame copies nothing (a record larger than the
// buffer is copied out), and a damaged length cannot make the reader
// allocate gigabytes. gopacket's pcapgo is not used: its Reader copies
// every frame out of the buffer, and its NgReader (gopacket 1.1.19)
// divides by zero on an if_tsresol of 64 or more, allocates whatever an
// interface's snap length or a block's captured length claims, keeps link
// types in a uint8 (so Linux cooked capture v2, 276, reads as 20) and
// reports a block cut off by the end of the file as a clean io.EOF. Every
// interface of a pcapng file keeps its own link type and timestamp
// resolution.
//
// Files are read with read(2) into a 64 KiB buffer. A memory map was
// measured and is slower: the kernel's copy brings each block into the
// processor's cache just before it is decoded, while decoding straight
// from the map pays a cache and TLB miss per packet (twice the user time
// on a 200 MB trace, with or without MAP_POPULATE), and page faults cost
// more system time than the copy.
//
// Errors name the file, the byte offset of the record or block at fault
// (in the decompressed data for gzip input) and what was expected, for
// example "trace.pcap: offset 1234: truncated packet record (want 76
// bytes, have 33)". An input that ends inside a record gives such an error
// after every whole packet before it; an input that ends between records
// is a clean end.
//
// # Decoding
//
// Link types: Ethernet (with 802.1Q and 802.1ad VLAN tags of any depth,
// LLC/SNAP and MPLS), FDDI, raw IPv4/IPv6 (101, 12, 14, 228, 229), BSD and
// OpenBSD loopback (0 and 108, either byte order, every operating system's
// IPv6 address family), Linux cooked capture v1 (113) and v2 (276), PPP
// (9, with or without HDLC-like framing; 50, PPP in HDLC framing or Cisco
// PPP), Cisco HDLC (104), IEEE 802.11 (105) and 802.11 after a radiotap
// header (127), and Linux netfilter logs (NFLOG, 239). Other link types are
// refused with a *LinkTypeError naming them.
//
// Of IEEE 802.11 frames, data frames carrying LLC/SNAP are decoded (plain
// and QoS, three or four addresses, HT Control, radiotap's data padding;
// of an A-MSDU, its first subframe), as Zeek's 802.11 analyzer decodes
// them; management and control frames, data frames without a body and
// protected (encrypted) frames carry no IP packet for the Decoder. An
// NFLOG record's packet is its payload TLV; the TLVs' byte order, the
// capturing host's, is told from their type field.
//
// The IP payload is cut to the IP length (Ethernet padding is not payload).
// IPv6 extension headers are walked to the transport header. Fragments set
// Fragment, FragOffset, MoreFrags and FragID; their transport header is
// left for the flow engine to decode after reassembly. Tunnels are not
// followed: the outer IP header is the packet's.
//
// The headers are decoded by hand (layers.go) the way gopacket 1.1.19's
// layers and DecodingLayerParser decode them, which the package used
// before: importing gopacket's layers package alone costs a program tens
// of milliseconds at start-up, a large part of analyzing a 100 MB trace.
// The tests keep the gopacket-based decoder as a reference and compare the
// two on every corpus frame, on cut and altered frames of every link type,
// and in FuzzDecode. The link types added since (PPP, Cisco HDLC, 802.11,
// radiotap, NFLOG) are held to tshark and tcpdump instead, on captures the
// tests write (TestLinkTypesMatchTshark) and on the corpus.
//
// Pcap files of versions 2.0 to 2.4 are read, as libpcap reads them:
// before 2.3 a record gives the original length before the captured one,
// and 2.3 files, written both ways, are put in order by which is larger.
//
// # Extending
//
// To support another link type: 1. add its LINKTYPE number and name in
// linktype.go; 2. give its header a header constant and a case in
// decodeLink (layers.go) that checks its length and names the header that
// follows (usually via etherNext); 3. start the chain with it in
// firstHeader (linktype.go), which SupportedLinkType and Decode both
// read; 4. add a case to the decoder's table test, frames to
// linkTypeFrames (compared with tshark) and a seed to the fuzz corpus
// generator.
package capture
