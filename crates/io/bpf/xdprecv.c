// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdprecv: pktlab's in-kernel receiver (`pktlab recv --io xdp`).
 *
 * For every frame: recognise the test payload exactly as
 * crates/wire/src/parse.rs does (Ethernet, up to two VLAN tags, IPv4 of any
 * IHL and not a fragment or IPv6 without extension headers, UDP, magic),
 * count it per CPU, check its sequence number against its stream's state
 * with the rules of crates/engine/src/seq.rs, add its latency to a
 * log-linear histogram, then drop it (or pass it on with CFG.pass).
 *
 * Streams: one entry per stream id in the `streams` array (sized by
 * user space to `--streams`). Frames of a stream id beyond it are counted
 * as `untracked`. The sequence check of a stream runs with the entry's
 * `busy` word held, so frames of one stream arriving on several CPUs at
 * once (RPS, several queues, a flow that is not hashed) are checked one
 * after the other, in the order they took it, exactly as one user-space
 * checker would see them. `busy` is taken with one compare-and-swap and
 * given back with one exchange rather than with bpf_spin_lock: the helper
 * also saves and restores the interrupt flags, and measured with
 * kernel.bpf_stats_enabled on this project's 2-CPU VM it cost 45-50 ns per
 * frame against about 6 ns for the two atomics (bench/xdprecv has the
 * rates). Nothing else runs this program on a CPU while it holds `busy`
 * (XDP runs with bottom halves off), so a CPU that finds it taken waits
 * for another CPU's few instructions; after SPIN_TRIES tries (a CPU held
 * up for milliseconds) the frame is counted as `busy` and not checked.
 *
 * CFG.time_every says which test frames are timed: 1, every one (the
 * default); 0, none (recv --latency off), only the first frame of each CPU
 * reads the clock; N, one test frame in N on each CPU (recv --latency 1/N),
 * its first, its N+1th and so on, counted down in `until_timed`.
 *
 * With CFG.limit (recv -n), frames after the first `limit` ones on all
 * CPUs together are not counted at all, as a user-space receiver that
 * stopped reading: one shared atomic add per frame, only then.
 *
 * Build: crates/io/bpf/build.sh (clang -O2 -g -target bpf -mcpu=v3).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* Mirrors crates/wire/src/payload.rs. */
#define MAGIC 0x504c
#define PAYLOAD_LEN 14
#define TS40_MASK ((1ULL << 40) - 1)
/* crates/wire/src/payload.rs's believable_latency: below half the wrap,
 * and sent at most STAMP_SLACK_NS before this CPU's first frame. */
#define TS40_HALF (1ULL << 39)
#define STAMP_SLACK_NS 10000000000ULL
#define UDP_HDR 8
#define WINDOW 128
/* bpf_loop's turns waiting for a stream held by another CPU. */
#define SPIN_TRIES (1 << 20)

/* Histogram: values below 2^SUB_BITS+1 have a bucket each; above, every
 * power of two is split in 2^SUB_BITS equal buckets (relative error below
 * 1/128). Values are below 2^40 (latency mod 2^40). Mirrors
 * crates/io/src/xdprecv/hist.rs. */
#define SUB_BITS 7
#define SUB (1 << SUB_BITS)
#define MAX_LOG2 39
#define BUCKETS ((MAX_LOG2 - SUB_BITS + 2) * SUB)

/* Set before load (.rodata). Mirrors `Cfg` in crates/io/src/xdprecv/maps.rs. */
struct cfg {
	__s64 tai_minus_realtime; /* ns: CLOCK_TAI - CLOCK_REALTIME */
	__u32 pass;               /* 1: XDP_PASS, 0: XDP_DROP */
	__u32 time_every;         /* 1: every test frame timed, 0: none, N: 1 in N */
	__u64 limit;              /* frames to count (recv -n), 0: all */
};

const volatile struct cfg CFG = {};

/* Per-CPU counters. Mirrors `CpuStats` in crates/io/src/xdprecv/maps.rs. */
struct cpu_stats {
	__u64 packets, bytes;   /* every frame; bytes with the FCS */
	__u64 foreign;          /* frames without a test payload */
	__u64 untracked;        /* test frames of a stream id beyond the map */
	__u64 first_ns, last_ns; /* CLOCK_REALTIME of the first and last frame */
	__u64 lat_count, lat_sum, lat_min, lat_max;
	__u64 busy;             /* test frames not checked: stream held too long */
	__u64 bad_stamps;       /* test frames whose stamp cannot be a latency */
	__u64 until_timed;      /* time_every > 1: test frames left before the next timed one */
};

/* One stream. Mirrors `Stream` in crates/io/src/xdprecv/maps.rs and the
 * state of crates/engine/src/seq.rs. */
struct stream {
	__u32 busy;           /* 1 while a CPU checks a frame of the stream */
	__u32 next;
	__u64 win_lo, win_hi; /* bit i: number next - 1 - i has arrived */
	__u64 received, lost, out_of_order, duplicates;
	__u64 key_hash;       /* the 5-tuple of the stream's first frame */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_stats);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BUCKETS);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

/* Frames admitted so far when CFG.limit is set (one slot, all CPUs). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} admitted SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set to --streams at load */
	__type(key, __u32);
	__type(value, struct stream);
} streams SEC(".maps");

static __always_inline __u32 log2_u64(__u64 v)
{
	__u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

static __always_inline __u32 bucket_of(__u64 v)
{
	if (v < 2 * SUB)
		return v;
	__u32 e = log2_u64(v);
	return (e - SUB_BITS + 1) * SUB + ((v >> (e - SUB_BITS)) & (SUB - 1));
}

/* A 64-bit hash of the 5-tuple (FxHash-style): it only has to tell the
 * flows apart for the `flows` count. */
static __always_inline __u64 mix(__u64 h, __u64 w)
{
	return ((h << 5 | h >> 59) ^ w) * 0x517cc1b727220a95ULL;
}

/* The first frame of stream `s`: crates/engine/src/seq.rs's
 * StreamState::first. Every bit of the window stands for a number below
 * it: absent for the numbers from 0 counted as lost, present for the
 * numbers "before 0", never counted, so a late frame only takes back a
 * loss that was counted. A first number of 2^31 or more starts the
 * stream there, nothing lost. */
static __always_inline void first(struct stream *s, __u32 seq)
{
	s->received = 1;
	s->next = seq + 1;
	if ((__s32)seq < 0) {
		s->win_lo = ~0ULL;
		s->win_hi = ~0ULL;
		return;
	}
	s->lost = seq;
	__u32 n = seq + 1; /* the numbers from 0, this one included */
	if (n >= WINDOW) {
		s->win_lo = 1;
		s->win_hi = 0;
	} else if (n >= 64) {
		s->win_lo = 1;
		s->win_hi = ~0ULL << (n - 64);
	} else {
		s->win_lo = (~0ULL << n) | 1;
		s->win_hi = ~0ULL;
	}
}

/* Frame `seq` of stream `s` after its first: crates/engine/src/seq.rs's
 * StreamState::observe. */
static __always_inline void observe(struct stream *s, __u32 seq)
{
	s->received++;
	__s32 d = (__s32)(seq - s->next);
	if (d >= 0) {
		__u32 n = (__u32)d + 1; /* the skipped numbers, then this one */
		s->lost += (__u32)d;
		if (n >= WINDOW) {
			s->win_lo = 1;
			s->win_hi = 0;
		} else if (n >= 64) {
			s->win_hi = s->win_lo << (n - 64);
			s->win_lo = 1;
		} else {
			s->win_hi = (s->win_hi << n) | (s->win_lo >> (64 - n));
			s->win_lo = (s->win_lo << n) | 1;
		}
		s->next = seq + 1;
		return;
	}
	__u32 age = (__u32)0 - (__u32)d; /* 1 = the number just below next */
	if (age <= WINDOW) {
		__u32 bit = age - 1;
		__u64 *w = bit < 64 ? &s->win_lo : &s->win_hi;
		__u64 mask = 1ULL << (bit & 63);
		if (*w & mask) {
			s->duplicates++;
		} else {
			*w |= mask;
			s->out_of_order++;
			s->lost--;
		}
	} else if (s->lost > 0) {
		s->out_of_order++;
		s->lost--;
	} else {
		s->duplicates++;
	}
}

struct wait {
	struct stream *s;
	int held;
};

static long try_take(__u32 i, void *ctx)
{
	struct wait *w = ctx;
	if (__sync_val_compare_and_swap(&w->s->busy, 0, 1) == 0) {
		w->held = 1;
		return 1;
	}
	return 0;
}

/* Takes stream `s` for this CPU: true once held. */
static __always_inline int take(struct stream *s)
{
	if (__sync_val_compare_and_swap(&s->busy, 0, 1) == 0)
		return 1;
	struct wait w = { .s = s, .held = 0 };
	bpf_loop(SPIN_TRIES, try_take, &w, 0);
	return w.held;
}

/* One frame; `frags` is a constant of each entry point below. */
static __always_inline int check(struct xdp_md *ctx, const int frags)
{
	const int verdict = CFG.pass ? XDP_PASS : XDP_DROP;
	__u32 zero = 0;
	if (CFG.limit) {
		__u64 *n = bpf_map_lookup_elem(&admitted, &zero);
		if (!n || __sync_fetch_and_add(n, 1) >= CFG.limit)
			return verdict;
	}
	struct cpu_stats *st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return verdict;
	/* The clock read is the dearest step (about 45 ns of the program's
	 * 100 here): unless every frame is timed, only a CPU's first frame
	 * reads it here and user space times the last one by watching the
	 * counters. */
	__u64 now = 0;
	if (CFG.time_every == 1 || !st->first_ns)
		now = bpf_ktime_get_tai_ns() - CFG.tai_minus_realtime;
	st->packets++;
	/* The helper is a call, dear where every return goes through a
	 * mitigation thunk (about 8 ns a frame here): a program that takes no
	 * multi-buffer frames measures its one buffer itself. */
	if (frags)
		st->bytes += bpf_xdp_get_buff_len(ctx) + 4;
	else
		st->bytes += ctx->data_end - ctx->data + 4;
	if (!st->first_ns)
		st->first_ns = now;
	if (CFG.time_every == 1)
		st->last_ns = now;

	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u8 *p = data;
	if (p + ETH_HLEN > (__u8 *)end)
		goto foreign;
	__u16 proto = *(__u16 *)(p + 12);
	__u32 l3 = ETH_HLEN;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		if (p + l3 + 4 > (__u8 *)end)
			goto foreign;
		proto = *(__u16 *)(p + l3 + 2);
		l3 += 4;
	}

	__u8 *ip = p + l3;
	__u8 *udp;
	__u64 h;
	if (proto == bpf_htons(ETH_P_IP)) {
		if (ip + 20 > (__u8 *)end)
			goto foreign;
		__u32 ihl = (ip[0] & 0x0f) * 4;
		if ((ip[0] >> 4) != 4 || ihl < 20 || ip + ihl > (__u8 *)end)
			goto foreign;
		if (ip[9] != 17 || (*(__u16 *)(ip + 6) & bpf_htons(0x3fff)))
			goto foreign;
		if (bpf_ntohs(*(__u16 *)(ip + 2)) < ihl + UDP_HDR + PAYLOAD_LEN)
			goto foreign;
		udp = ip + ihl;
		h = mix(4, *(__u32 *)(ip + 12));
		h = mix(h, *(__u32 *)(ip + 16));
	} else if (proto == bpf_htons(ETH_P_IPV6)) {
		if (ip + 40 > (__u8 *)end)
			goto foreign;
		if ((ip[0] >> 4) != 6 || ip[6] != 17)
			goto foreign;
		if (bpf_ntohs(*(__u16 *)(ip + 4)) < UDP_HDR + PAYLOAD_LEN)
			goto foreign;
		udp = ip + 40;
		h = 6;
#pragma unroll
		for (int i = 8; i < 40; i += 8)
			h = mix(h, *(__u64 *)(ip + i));
	} else {
		goto foreign;
	}
	/* The UDP header and the whole test payload must be in the frame. */
	if (udp + UDP_HDR + PAYLOAD_LEN > (__u8 *)end)
		goto foreign;
	if (bpf_ntohs(*(__u16 *)(udp + 4)) < UDP_HDR + PAYLOAD_LEN)
		goto foreign;
	__u8 *pl = udp + UDP_HDR;
	if (pl[0] != (MAGIC >> 8) || pl[1] != (MAGIC & 0xff))
		goto foreign;
	h = mix(h, *(__u32 *)udp); /* both ports */

	__u32 id = (__u32)pl[2] << 16 | (__u32)pl[3] << 8 | pl[4];
	__u32 seq = (__u32)pl[5] << 24 | (__u32)pl[6] << 16 | (__u32)pl[7] << 8 | pl[8];
	__u64 ts40 = (__u64)pl[9] << 32 | (__u64)pl[10] << 24 | (__u64)pl[11] << 16 |
		     (__u64)pl[12] << 8 | pl[13];

	struct stream *s = bpf_map_lookup_elem(&streams, &id);
	if (s && take(s)) {
		if (s->received == 0) {
			s->key_hash = h | 1;
			first(s, seq);
		} else {
			observe(s, seq);
		}
		__sync_lock_test_and_set(&s->busy, 0);
	} else if (s) {
		st->busy++;
	} else {
		st->untracked++;
	}
	if (CFG.time_every == 0)
		return verdict;
	if (CFG.time_every > 1) {
		if (st->until_timed) {
			st->until_timed--;
			return verdict;
		}
		st->until_timed = CFG.time_every - 1;
		/* Read after the checks (about 10 ns later than with every
		 * frame timed, below the histogram's resolution for latencies
		 * above 1.3 us): only the test frames are counted down. */
		if (!now)
			now = bpf_ktime_get_tai_ns() - CFG.tai_minus_realtime;
	}

	/* crates/wire/src/payload.rs's latency_ns, at least 1 as in
	 * crates/engine/src/rx.rs. */
	__u64 lat = (now - ts40) & TS40_MASK;
	if (lat >= TS40_HALF || lat > now - st->first_ns + STAMP_SLACK_NS) {
		st->bad_stamps++;
		return verdict;
	}
	if (lat == 0)
		lat = 1;
	st->lat_count++;
	st->lat_sum += lat;
	if (st->lat_min == 0 || lat < st->lat_min)
		st->lat_min = lat;
	if (lat > st->lat_max)
		st->lat_max = lat;
	__u32 b = bucket_of(lat);
	__u64 *c = bpf_map_lookup_elem(&hist, &b);
	if (c)
		(*c)++;
	return verdict;

foreign:
	st->foreign++;
	return verdict;
}

/* For interfaces whose MTU needs multi-buffer frames (jumbo frames). */
SEC("xdp.frags")
int xdprecv(struct xdp_md *ctx)
{
	return check(ctx, 1);
}

/* For the others: every frame is one buffer (the kernel refuses this
 * program where the MTU could make more). */
SEC("xdp")
int xdprecv_linear(struct xdp_md *ctx)
{
	return check(ctx, 0);
}

char _license[] SEC("license") = "Dual BSD/GPL";
