// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdpgen: pktlab's XDP live-frame generator (`pktlab gen --io xdp`).
 *
 * User space runs the `xdpgen` program with BPF_PROG_RUN and
 * BPF_F_TEST_XDP_LIVE_FRAMES, `repeat` times per call, from one pinned
 * thread per CPU. data_in is the template of the largest frame size; each
 * run turns one page-pool copy of it into the next frame of this CPU's
 * share of the flows and redirects it to the TX interface through a
 * devmap.
 *
 * The page pool recycles pages WITHOUT copying data_in again. A recycled
 * page holds whatever its last user wrote: the frame this program wrote
 * into it before (another flow, another size), and, when the frame went
 * zero-copy through a veth into a forwarding stack, the forwarder's new
 * Ethernet header, TTL and checksum. So the program writes every header
 * byte (Ethernet to the end of the 14-byte test payload) from the template
 * in .rodata and computes both checksums from the template's (RFC 1624
 * eqn. 3 with the old words zero), never from what the page holds. Fill
 * bytes after the test payload depend only on their offset and nothing on
 * a forwarding path writes there, so they are never written.
 *
 * The two tracing programs count what happened to the frames after the
 * redirect: the driver's ndo_xdp_xmit result per bulk (sent, dropped) and
 * failed redirects. Both fire inside the generator's batch, on its CPU,
 * which is how they are told from other XDP users' (see `pending`).
 *
 * `xdp_probe` redirects the template as it is: the speed limit of the
 * technique, for the benchmark.
 *
 * Build: crates/io/bpf/build.sh (clang -O2 -g -target bpf -mcpu=v3).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define MAX_SIZES 16
#define MAX_PATTERN 4096
#define MAX_HDR 80 /* Ethernet + 802.1Q + IPv6 + UDP + test payload */

/* One distinct frame size. */
struct size_tmpl {
	__u16 len;      /* frame length without FCS */
	__u16 ip_csum;  /* IPv4 header checksum of this size's template */
	__u16 udp_csum; /* UDP checksum of the template, zero pseudo addresses */
	__u16 l3_len;   /* IPv4 total length / IPv6 payload length */
};

/* Set before load (.rodata): the verifier sees the values, so the code of
 * the other family, layout and flow order is removed. Mirrors `Cfg` in
 * crates/io/src/xdpgen/template.rs. */
struct cfg {
	__u32 tx_ifindex;
	__u32 v6;          /* 0 IPv4, 1 IPv6 */
	__u32 l3;          /* 14, or 18 with an 802.1Q tag */
	__u32 random;      /* flows in the order of the flow_table map */
	__u32 nflows;
	/* Odometer radices: sport fastest, then saddr, dport, daddr. */
	__u32 nsport, nsaddr, ndport, ndaddr;
	__u32 sport0, dport0;
	/* Start addresses as 32-bit words, most significant first; IPv4 uses [3]. */
	__u32 saddr0[4], daddr0[4];
	__u32 nsizes, npattern;
	__u32 ts_every;    /* read the clock every N frames (0 or 1: every frame) */
	__u32 hdr_len;     /* bytes from the Ethernet header to the end of the test payload */
	__u32 rfc4814;     /* 1: RFC 4814 ports, drawn per frame from port_rng */
	struct size_tmpl sizes[MAX_SIZES];
	/* The largest size's headers with every per-frame field zero. */
	__u8 hdr[MAX_HDR] __attribute__((aligned(8)));
};

const volatile struct cfg CFG = {};

/* This CPU's generator state: user space writes the starting values and
 * reads the counters. Mirrors `CpuState` in crates/io/src/xdpgen/maps.rs. */
struct cpu_state {
	/* Where the next frame's flow sits in the global order. */
	__u32 pos;
	__u32 first, step;                        /* this thread's first position; thread count */
	__u32 d_sport, d_saddr, d_dport, d_daddr; /* odometer digits of pos */
	__u32 f_sport, f_saddr, f_dport, f_daddr; /* digits of first */
	/* Completed cycles over this thread's flows: each flow is sent once
	 * per cycle, so this is every stream's next sequence number. */
	__u32 cycle;
	__u32 pat_pos;
	__u32 ts_left;
	/* RFC 4814 ports: SplitMix64's state, of the next draw. */
	__u64 port_rng;
	__s64 tai_minus_realtime; /* ns: CLOCK_TAI - CLOCK_REALTIME, whole seconds */
	__u64 ts_cache;
	__u64 frames, bytes;      /* redirected frames; their bytes with the FCS */
	__u64 aborted;            /* runs that returned XDP_ABORTED (never expected) */
	/* Frames redirected and not yet seen by a tracepoint: above zero only
	 * inside one of this generator's batches on this CPU, which runs with
	 * bottom halves (and so preemption) off. It tells this generator's
	 * events from every other XDP user's, another generator's too. */
	__s64 pending;
	__u64 size_frames[MAX_SIZES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_state);
} state SEC(".maps");

/* Frame k of the size pattern: an index into CFG.sizes. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_PATTERN);
	__type(key, __u32);
	__type(value, __u32);
} pattern SEC(".maps");

/* Random order: the flow index at each position of the global order (the
 * wire crate's seeded permutation); resized to the flow count at load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} flow_table SEC(".maps");

/* The TX interface: a devmap saves a device lookup per frame. */
struct {
	__uint(type, BPF_MAP_TYPE_DEVMAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} tx_port SEC(".maps");

static __always_inline __u64 sum32(__u32 x)
{
	return (x >> 16) + (x & 0xffff);
}

/* RFC 1624 eqn. 3 with every old word zero: ~(~HC + sum of new words). */
static __always_inline __u16 csum_update_from_zero(__u16 tmpl, __u64 words)
{
	__u64 s = (__u16)~tmpl + words;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

/* d += *carry in radix r; *carry becomes the carry out. Divides only when
 * the digit overflows by more than one radix (thread counts above it). */
static __always_inline __u32 digit_add(__u32 d, __u32 r, __u32 *carry)
{
	d += *carry;
	if (d < r) {
		*carry = 0;
	} else if (d - r < r) {
		d -= r;
		*carry = 1;
	} else {
		*carry = d / r;
		d = d % r;
	}
	return d;
}

/* RFC 4814 ports (RFC 4814 section 4.5): one SplitMix64 draw per frame,
 * its high half mapped onto 1024-65535 for the source port and its low
 * half onto 1-49151 for the destination, by multiply-shift. The same
 * arithmetic as crates/wire/src/rfc4814.rs, so the same state gives the
 * same ports. */
static __always_inline __u32 rfc4814_ports(struct cpu_state *st)
{
	__u64 z = st->port_rng + 0x9e3779b97f4a7c15ULL;

	st->port_rng = z;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	__u32 sport = 1024 + (__u32)(((z >> 32) * 64512) >> 32);
	__u32 dport = 1 + (__u32)(((z & 0xffffffff) * 49151) >> 32);

	return (sport << 16) | dport;
}

static __always_inline void store32(void *p, __u32 host)
{
	*(__u32 *)p = bpf_htonl(host);
}

static __always_inline void store16(void *p, __u16 host)
{
	*(__u16 *)p = bpf_htons(host);
}

static __always_inline int abort_frame(struct cpu_state *st)
{
	st->aborted++;
	return XDP_ABORTED;
}

SEC("xdp")
int xdpgen(struct xdp_md *ctx)
{
	/* Only BPF_PROG_RUN's frames, whose rxq is the loopback device. The
	 * program also sits attached to an idle "anchor" interface, only to
	 * stay in the kernel's XDP dispatcher between runs; anything really
	 * received there passes untouched. */
	if (ctx->ingress_ifindex != 1)
		return XDP_PASS;

	__u32 zero = 0;
	struct cpu_state *st = bpf_map_lookup_elem(&state, &zero);

	if (!st)
		return XDP_ABORTED;

	/* Frame size: the pattern's next entry. */
	__u32 si = 0;
	if (CFG.nsizes > 1) {
		__u32 pp = st->pat_pos;
		__u32 *idx = bpf_map_lookup_elem(&pattern, &pp);

		if (!idx)
			return abort_frame(st);
		si = *idx;
		pp++;
		if (pp >= CFG.npattern)
			pp = 0;
		st->pat_pos = pp;
	}
	if (si >= MAX_SIZES)
		return abort_frame(st);
	const volatile struct size_tmpl *sz = &CFG.sizes[si];
	__u32 len = sz->len;

	if (CFG.nsizes > 1) {
		/* data_in is the largest size; test_run restores data_end for
		 * every frame, so shrinking is relative to it. */
		int delta = (int)len - (int)(ctx->data_end - ctx->data);

		if (delta && bpf_xdp_adjust_tail(ctx, delta))
			return abort_frame(st);
	}

	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	const __u32 l3 = CFG.l3;
	const __u32 l4 = l3 + (CFG.v6 ? 40 : 20);
	const __u32 hdr_len = CFG.hdr_len;

	if (hdr_len > MAX_HDR || hdr_len < l4 + 8 + 14 || data + hdr_len > data_end)
		return abort_frame(st);

	/* Every header byte, not only the per-frame fields (see the top). */
#pragma unroll
	for (int i = 0; i < MAX_HDR / 8; i++) {
		if (i * 8 + 8 <= hdr_len)
			*(__u64 *)(data + i * 8) = *(const volatile __u64 *)&CFG.hdr[i * 8];
	}
	if (hdr_len % 8)
		*(__u32 *)(data + (hdr_len & ~7)) = *(const volatile __u32 *)&CFG.hdr[hdr_len & ~7];

	/* This frame's flow. */
	__u32 d_sport, d_saddr, d_dport, d_daddr, stream;
	if (CFG.random) {
		__u32 pos = st->pos;
		__u32 *f = bpf_map_lookup_elem(&flow_table, &pos);

		if (!f)
			return abort_frame(st);
		stream = *f;
		__u32 r = stream;
		d_sport = r % CFG.nsport;
		r /= CFG.nsport;
		d_saddr = r % CFG.nsaddr;
		r /= CFG.nsaddr;
		d_dport = r % CFG.ndport;
		d_daddr = r / CFG.ndport;
	} else {
		stream = st->pos;
		d_sport = st->d_sport;
		d_saddr = st->d_saddr;
		d_dport = st->d_dport;
		d_daddr = st->d_daddr;
	}
	__u32 sport = CFG.sport0 + d_sport;
	__u32 dport = CFG.dport0 + d_dport;
	__u32 seq = st->cycle;
	__u64 words;

	if (!CFG.v6) {
		__u32 src = CFG.saddr0[3] + d_saddr;
		__u32 dst = CFG.daddr0[3] + d_daddr;

		store32(data + l3 + 12, src);
		store32(data + l3 + 16, dst);
		words = sum32(src) + sum32(dst);
		if (CFG.nsizes > 1)
			store16(data + l3 + 2, sz->l3_len);
		store16(data + l3 + 10, csum_update_from_zero(sz->ip_csum, words));
	} else {
		/* 128-bit start + offset, as four 32-bit words with carries. */
		__u64 s3 = (__u64)CFG.saddr0[3] + d_saddr;
		__u64 s2 = (__u64)CFG.saddr0[2] + (s3 >> 32);
		__u64 s1 = (__u64)CFG.saddr0[1] + (s2 >> 32);
		__u32 s0 = CFG.saddr0[0] + (__u32)(s1 >> 32);
		__u64 t3 = (__u64)CFG.daddr0[3] + d_daddr;
		__u64 t2 = (__u64)CFG.daddr0[2] + (t3 >> 32);
		__u64 t1 = (__u64)CFG.daddr0[1] + (t2 >> 32);
		__u32 t0 = CFG.daddr0[0] + (__u32)(t1 >> 32);

		store32(data + l3 + 8, s0);
		store32(data + l3 + 12, (__u32)s1);
		store32(data + l3 + 16, (__u32)s2);
		store32(data + l3 + 20, (__u32)s3);
		store32(data + l3 + 24, t0);
		store32(data + l3 + 28, (__u32)t1);
		store32(data + l3 + 32, (__u32)t2);
		store32(data + l3 + 36, (__u32)t3);
		words = sum32(s0) + sum32((__u32)s1) + sum32((__u32)s2) + sum32((__u32)s3) +
			sum32(t0) + sum32((__u32)t1) + sum32((__u32)t2) + sum32((__u32)t3);
		if (CFG.nsizes > 1)
			store16(data + l3 + 4, sz->l3_len);
	}

	/* TX time: CLOCK_REALTIME ns mod 2^40. A clock read costs about 12%
	 * of a frame, so it is read once per ts_every frames (the devmap's
	 * bulk of 16, which the driver gets in one piece anyway). */
	__u64 ts;
	if (CFG.ts_every > 1) {
		if (st->ts_left == 0) {
			st->ts_cache = bpf_ktime_get_tai_ns() - st->tai_minus_realtime;
			st->ts_left = CFG.ts_every;
		}
		st->ts_left--;
		ts = st->ts_cache;
	} else {
		ts = bpf_ktime_get_tai_ns() - st->tai_minus_realtime;
	}
	ts &= (1ULL << 40) - 1;

	/* Ports (the flow's, or RFC 4814's pseudorandom ones; the template's
	 * are zero either way), then the test payload's variable part
	 * (stream 3 bytes, seq 4, ts 5) as three big-endian 32-bit words
	 * after the magic. */
	__u32 ports = CFG.rfc4814 ? rfc4814_ports(st) : (sport << 16) | (dport & 0xffff);
	__u32 w0 = (stream << 8) | (seq >> 24);
	__u32 w1 = (seq << 8) | (__u32)(ts >> 32);
	__u32 w2 = (__u32)ts;

	store32(data + l4, ports);
	if (CFG.nsizes > 1)
		store16(data + l4 + 4, sz->len - l4);
	store32(data + l4 + 10, w0);
	store32(data + l4 + 14, w1);
	store32(data + l4 + 18, w2);
	words += sum32(ports) + sum32(w0) + sum32(w1) + sum32(w2);
	__u16 uc = csum_update_from_zero(sz->udp_csum, words);
	store16(data + l4 + 6, uc ? uc : 0xffff);

	st->frames++;
	st->pending++;
	st->bytes += len + 4;
	if (CFG.nsizes > 1)
		st->size_frames[si]++;

	/* Next position: step forward, cycling over this thread's share. */
	__u32 next = st->pos + st->step;
	if (next >= CFG.nflows) {
		st->pos = st->first;
		st->d_sport = st->f_sport;
		st->d_saddr = st->f_saddr;
		st->d_dport = st->f_dport;
		st->d_daddr = st->f_daddr;
		st->cycle++;
	} else if (CFG.random) {
		st->pos = next;
	} else {
		__u32 c = st->step;

		st->pos = next;
		st->d_sport = digit_add(st->d_sport, CFG.nsport, &c);
		if (c) {
			st->d_saddr = digit_add(st->d_saddr, CFG.nsaddr, &c);
			if (c) {
				st->d_dport = digit_add(st->d_dport, CFG.ndport, &c);
				if (c)
					st->d_daddr += c; /* cannot pass ndaddr: next < nflows */
			}
		}
	}

	return bpf_redirect_map(&tx_port, 0, 0);
}

/* What happened after the redirect. Mirrors `TxReport` in
 * crates/io/src/xdpgen/maps.rs. */
struct tx_report {
	__u64 xmit_sent;     /* frames the driver took */
	__u64 xmit_drops;    /* frames the driver refused (a full ring, ...) */
	__u64 xmit_calls;    /* ndo_xdp_xmit calls */
	__u64 redirect_errs; /* redirects that failed before the driver */
	__s64 last_err;      /* the last error code seen, negative errno */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tx_report);
} tx_report SEC(".maps");

/* Only the field we read; CO-RE finds its offset in the running kernel. */
struct net_device {
	int ifindex;
} __attribute__((preserve_access_index));

/* This CPU's report, when the event is about frames of this generator's
 * batch under way on this CPU: `n` of its pending frames are accounted. */
static __always_inline struct tx_report *own_report(__s64 n)
{
	__u32 zero = 0;
	struct cpu_state *st = bpf_map_lookup_elem(&state, &zero);

	if (!st || st->pending <= 0)
		return 0;
	st->pending -= n;
	return bpf_map_lookup_elem(&tx_report, &zero);
}

/* xdp_devmap_xmit(from_dev, to_dev, sent, drops, err): one per bulk. */
SEC("tp_btf/xdp_devmap_xmit")
int tx_xmit(__u64 *ctx)
{
	const struct net_device *from = (const void *)ctx[0];
	const struct net_device *to = (const void *)ctx[1];
	int sent = (int)ctx[2], drops = (int)ctx[3], err = (int)ctx[4];
	struct tx_report *r;

	/* BPF_PROG_RUN's frames come from loopback (ifindex 1). */
	if (from->ifindex != 1 || to->ifindex != (int)CFG.tx_ifindex)
		return 0;
	r = own_report(sent + drops);
	if (!r)
		return 0;
	r->xmit_sent += sent;
	r->xmit_drops += drops;
	r->xmit_calls++;
	if (err)
		r->last_err = err;
	return 0;
}

/* xdp_redirect_err(dev, xdp, tgt, err, map_type, map_id, index). */
SEC("tp_btf/xdp_redirect_err")
int tx_redirect_err(__u64 *ctx)
{
	const struct net_device *dev = (const void *)ctx[0];
	int err = (int)ctx[3];
	struct tx_report *r;

	if (dev->ifindex != 1)
		return 0;
	r = own_report(1);
	if (!r)
		return 0;
	r->redirect_errs++;
	r->last_err = err;
	return 0;
}

/* The template as it is, redirected: the technique's speed limit. */
SEC("xdp")
int xdp_probe(struct xdp_md *ctx)
{
	if (ctx->ingress_ifindex != 1)
		return XDP_PASS;
	return bpf_redirect_map(&tx_port, 0, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
