// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for whole NetVM conversations between two simulated
 * chips (tests/unit/sim_*.c): processes on both nodes issue writes, reads
 * and atomics to each other's exports (good and bad keys, ports, offsets,
 * lengths, physical addressing from the kernel), pages go out and come
 * back, the wire drops and duplicates, a hostile node forges frames of any
 * header to either chip, and simulated time passes.  Built with ASan and
 * UBSan; beyond "no crash" it asserts the grant invariant (sim_host.h):
 * no host DMA of either NIC ever touches memory that neither a process
 * (a resident page) nor the kernel (a registered area) granted, and the
 * kernels' secret pages stay intact.
 *
 * Input: a sequence of records  [kind:1][len:1][bytes:len]
 *   kind 0  a library-style transfer by a process (bytes: side, op,
 *           node, port, offsets, length, key good or not)
 *   kind 1  a raw command (any bytes) on a user endpoint of either side
 *   kind 2  a forged NetVM frame into either chip (bytes: claimed source
 *           node, then the net header and payload; the epochs and the
 *           sequence number are made plausible when asked, so the frame
 *           gets past the window)
 *   kind 3  a page of a process goes out (or comes back)
 *   kind 4  a kernel physical write, read or atomic (any remote address)
 *   kind 5  time passes (up to 2.5 simulated s), wire faults change
 *   kind 6  a doorbell on a user endpoint's page (any count)
 * Kernel commands other than physical transfers are not fuzzed here: the
 * kernel is trusted with the NIC (it could point it anywhere).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_host.h"
#include "sim_peer.h"

static struct sim_chip c[2];
static struct sim_host h[2];
static uint64_t win[2], kbuf[2];

#define VA		0x40000000ull	/* each process's exported buffer */
#define PAGES		8
#define KEY(n)		(0x5eed0000ull + (n))
#define EPOCH(n)	(0xe0000000u + (n))

static void setup(void)
{
	for (int n = 0; n < 2; n++) {
		sim_init(&c[n], (uint16_t)n, LANAI_SRAM_DEFAULT);
		sim_boot(&c[n]);
	}
	sim_connect(&c[0], &c[1]);
	sh_pair(&h[0], &h[1]);
	for (int n = 0; n < 2; n++)
		sh_init(&h[n], &c[n], EPOCH(n));
	sim_settle(&c[0], &c[1]);
	for (int n = 0; n < 2; n++) {
		for (uint32_t p = 1; p < 4; p++)
			sh_open(&h[n], p);
		for (uint32_t p = 1; p < 3; p++)
			sh_alloc(&h[n], p, VA, PAGES * 4096, KEY(p), true);
		win[n] = sh_kalloc(&h[n], 2);
		kbuf[n] = sh_kalloc(&h[n], 2);
		/* the other node may read and write the window */
		sh_phys_win(&h[n], 0, win[n], 2 * 4096, 1u << (1 - n),
			    NVM_PW_READ | NVM_PW_WRITE);
	}
	sim_settle(&c[0], &c[1]);
}

static uint32_t get(const uint8_t *p, uint32_t len, uint32_t i, uint32_t n)
{
	uint32_t v = 0;

	for (uint32_t k = 0; k < n && i + k < len; k++)
		v |= (uint32_t)p[i + k] << (8 * k);
	return v;
}

/* Issue only while the queue has room: a real process would wait. */
static bool room(int n, uint32_t port)
{
	struct nvm_ep_status st;

	memcpy(&st, c[n].chip.sram + c[n].fw.layout.ep_base +
	       port * NVM_EP_STRIDE + NVM_EP_STATUS, sizeof(st));
	return h[n].issued[port] - st.consumed < NVM_CMDQ_LEN - 8;
}

static void transfer(const uint8_t *p, uint32_t len)
{
	int n = get(p, len, 0, 1) & 1;
	uint32_t op = get(p, len, 1, 1) % 3;
	uint16_t node = get(p, len, 2, 1) % 4 == 3 ? 2 : 1 - n;
	uint32_t port = 1 + get(p, len, 3, 1) % 2;
	uint32_t rport = get(p, len, 4, 1) % 4;
	uint64_t lo = get(p, len, 5, 2) % (PAGES * 4096);
	uint64_t ro = get(p, len, 7, 2) % (PAGES * 4096 + 4096);
	uint32_t n_b = 1 + get(p, len, 9, 2) % 9000;
	uint64_t key = get(p, len, 11, 1) & 1 ? KEY(rport) ^ 1 : KEY(rport);
	uint8_t flags = get(p, len, 12, 1) &
			(NVM_CF_NOTIFY | NVM_CF_SHADOW | NVM_CF_ACK_NOW);

	if (lo + n_b > PAGES * 4096)
		n_b = (uint32_t)(PAGES * 4096 - lo);
	if (!n_b || !room(n, port))
		return;
	if (op == 0)
		sh_write(&h[n], port, node, (uint16_t)rport, VA + lo, VA + ro,
			 n_b, key, flags, 1 + get(p, len, 13, 2) % 2000);
	else if (op == 1)
		sh_read(&h[n], port, node, (uint16_t)rport, VA + lo, VA + ro,
			n_b, key);
	else
		sh_atomic(&h[n], port, node, (uint16_t)rport,
			  VA + (ro & ~3ull), key, 1 + get(p, len, 13, 1) % 10,
			  get(p, len, 14, 4), get(p, len, 18, 4));
}

static void raw_cmd(const uint8_t *p, uint32_t len)
{
	int n = get(p, len, 0, 1) & 1;
	uint32_t port = 1 + get(p, len, 0, 1) / 2 % 3;
	struct nvm_cmd cmd;

	if (!room(n, port) || len < 1)
		return;
	memset(&cmd, 0, sizeof(cmd));
	memcpy(&cmd, p + 1, len - 1 < sizeof(cmd) ? len - 1 : sizeof(cmd));
	sh_cmd(&h[n], port, &cmd);
}

static void forge(const uint8_t *p, uint32_t len)
{
	uint32_t to = get(p, len, 0, 1) & 1;
	uint16_t src = (uint16_t)(get(p, len, 0, 1) >> 1) % 4;
	uint32_t mode = get(p, len, 1, 1);
	struct nvm_net_hdr hd;
	uint32_t dlen = len > 2 + sizeof(hd) ? len - 2 - sizeof(hd) : 0;
	struct fw_nv_peer *pr;

	if (src == to)
		src = 3;
	memset(&hd, 0, sizeof(hd));
	memcpy(&hd, p + (len > 2 ? 2 : len), len > 2 ? (len - 2 < sizeof(hd) ?
						       len - 2 : sizeof(hd)) : 0);
	pr = &c[to].fw.nv.peer[src];
	if (mode & 1) {		/* plausible: the right epochs, in the window */
		hd.src_epoch = pr->epoch ? pr->epoch : EPOCH(src);
		hd.dst_epoch = EPOCH(to);
		hd.seq = pr->lsn + hd.seq % 80;
	}
	if (mode & 2)		/* a real response's request id */
		hd.req = fw_nv_req_id(1 + (hd.req >> 24) % 2, (hd.req >> 16) % 64,
				      h[to].issued[1 + (hd.req >> 24) % 2]);
	if (mode & 4)
		hd.len = dlen;
	if (mode & 8) {		/* aimed at the secret or the window */
		hd.va = (mode & 16 ? win[to] : h[to].secret) + hd.va % 8192;
		hd.flags |= NVM_CF_PHYS;
	}
	sim_nv_inject(&c[to], src, &hd, p + 2 + sizeof(hd), dlen);
}

static void paging(const uint8_t *p, uint32_t len)
{
	int n = get(p, len, 0, 1) & 1;
	uint32_t port = 1 + get(p, len, 1, 1) % 2;
	uint64_t va = VA + (uint64_t)(get(p, len, 2, 1) % PAGES) * 4096;

	if (get(p, len, 3, 1) & 1)
		sh_page_in(&h[n], port, va);
	else
		sh_page_out(&h[n], port, va);
}

static void phys(const uint8_t *p, uint32_t len)
{
	int n = get(p, len, 0, 1) & 1;
	uint32_t op = 1 + get(p, len, 1, 1) % 3;
	uint32_t sel = get(p, len, 2, 1) % 4;
	uint64_t local = kbuf[n] + get(p, len, 3, 2) % 4096;
	uint32_t n_b = 1 + get(p, len, 5, 2) % 4096;
	uint64_t remote = get(p, len, 7, 4);
	struct nvm_cmd cmd = {
		.op = (uint8_t)op, .flags = NVM_CF_PHYS, .dst_node = 1 - n,
	};

	/* the other node's window, its edges, its secret, or anything */
	if (sel == 0)
		remote = win[1 - n] + remote % 8192;
	else if (sel == 1)
		remote = win[1 - n] + 8192 - remote % 64;
	else if (sel == 2)
		remote = h[1 - n].secret + remote % 16384;
	if (local + n_b > kbuf[n] + 8192)
		n_b = (uint32_t)(kbuf[n] + 8192 - local);
	if (4096 - (remote & 4095) < n_b)
		n_b = 4096 - (uint32_t)(remote & 4095);
	if (4096 - (local & 4095) < n_b)
		n_b = 4096 - (uint32_t)(local & 4095);
	if (!room(n, 0))
		return;
	cmd.dst_va = remote;
	cmd.len = n_b;
	if (op == NVM_OP_ATOMIC) {
		cmd.dst_va &= ~3ull;
		cmd.atomic_op = 1 + get(p, len, 11, 1) % 10;
	} else {
		cmd.nfrag = 1;
		cmd.src[0].va = local;
		cmd.src[0].len = n_b;
	}
	sh_cmd(&h[n], 0, &cmd);
}

static void passing(const uint8_t *p, uint32_t len)
{
	uint32_t ms = get(p, len, 0, 2) % 2500;
	uint32_t f = get(p, len, 2, 1);

	for (int n = 0; n < 2; n++) {
		c[n].drop_pct = f & 1 ? 10 : 0;
		c[n].dup_pct = f & 2 ? 10 : 0;
		c[n].reorder_pct = f & 4 ? 20 : 0;
	}
	sim_settle_for(&c[0], &c[1], (uint64_t)ms * 1000000);
}

static void doorbell(const uint8_t *p, uint32_t len)
{
	int n = get(p, len, 0, 1) & 1;
	uint32_t port = 1 + get(p, len, 1, 1) % 3;

	sim_doorbell(&c[n], port * LANAI_DOORBELL_PAGE + get(p, len, 2, 2) %
		     LANAI_DOORBELL_PAGE, get(p, len, 4, 4));
}

static void check(void)
{
	if (sh_dma_violations(&h[0]) || sh_dma_violations(&h[1]))
		abort();	/* a NIC touched memory no one granted */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static void (*const kinds[])(const uint8_t *, uint32_t) = {
		transfer, raw_cmd, forge, paging, phys, passing, doorbell,
	};
	size_t i = 0;

	setup();
	while (i + 2 <= size) {
		uint32_t kind = data[i] % (sizeof(kinds) / sizeof(kinds[0]));
		uint32_t len = data[i + 1];

		if (i + 2 + len > size)
			len = (uint32_t)(size - i - 2);
		kinds[kind](data + i + 2, len);
		i += 2 + len;
		sim_run(&c[0], &c[1], 100);
		sh_idle(&h[0]);
		sh_idle(&h[1]);
		check();
	}
	/* a last 300 simulated ms: answers, retransmissions, bounces */
	for (int n = 0; n < 2; n++)
		c[n].drop_pct = c[n].dup_pct = c[n].reorder_pct = 0;
	sim_settle_for(&c[0], &c[1], 300000000ull);
	check();
	for (int n = 0; n < 2; n++)
		sim_free(&c[n]);
	return 0;
}
