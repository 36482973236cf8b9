// SPDX-License-Identifier: MIT
/*
 * The netvm libfabric provider against libfabric's public API (guest
 * group fi, tests/guest/test_fi.py; docs/libfabric.md).  Prints TAP-style
 * "ok - " lines; exit status 1 if any failed.
 *
 *   fi-netvm-test local
 *       two endpoints of one process (the node's loop-back): AV table and
 *       map, bad addresses refused, getname before enable, messages of 1,
 *       96, 97 and 4096 bytes byte for byte with readfrom naming the
 *       sender, a message cut to its receive (FI_ETRUNC, olen), a send
 *       too large (-FI_EMSGSIZE), sread timing out (-FI_EAGAIN) and
 *       waking for a message, fi_cancel of a posted receive.
 *   fi-netvm-test server      (node 1)
 *       writes its address to /tmp/fi.addr; takes 3 messages (sread):
 *       the first from a sender not in its AV (FI_ADDR_NOTAVAIL), whose
 *       payload is the sender's address string, which it inserts; the
 *       next two come from that fi_addr (the NI named the sender);
 *       answers each, 1 .. 4096 bytes, checked by the client.
 *   fi-netvm-test client ADDR (node 0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include "guest_tap.h"

struct side {
	struct fid_ep *ep;
	struct fid_cq *cq;
	char name[64];		/* netvm:N:P */
	uint8_t addr[64];
};

static struct fi_info *info;
static struct fid_fabric *fab;
static struct fid_domain *dom;

static void die(const char *what, int err)
{
	printf("not ok - %s: %d (%s)\n", what, err, fi_strerror(-err));
	exit(1);
}

static void open_fabric(void)
{
	struct fi_info *hints = fi_allocinfo();
	int err;

	hints->ep_attr->type = FI_EP_DGRAM;
	hints->caps = FI_MSG | FI_SOURCE;
	hints->fabric_attr->prov_name = strdup("netvm");
	err = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info);
	if (err)
		die("fi_getinfo", err);
	fi_freeinfo(hints);
	err = fi_fabric(info->fabric_attr, &fab, NULL);
	if (!err)
		err = fi_domain(fab, info, &dom, NULL);
	if (err)
		die("fabric and domain", err);
}

static void open_side(struct side *s, struct fid_av *av)
{
	struct fi_cq_attr ca = { .format = FI_CQ_FORMAT_MSG,
				 .wait_obj = FI_WAIT_UNSPEC, .size = 64 };
	size_t len = sizeof(s->addr), n = sizeof(s->name);
	int err;

	err = fi_cq_open(dom, &ca, &s->cq, NULL);
	if (!err)
		err = fi_endpoint(dom, info, &s->ep, NULL);
	if (!err)
		err = fi_getname(&s->ep->fid, s->addr, &len);
	check(err == -FI_EOPBADSTATE, "fi_getname before fi_enable: -FI_EOPBADSTATE (%d)", err);
	err = fi_enable(s->ep);
	check(err == -FI_ENOCQ, "fi_enable with nothing bound: -FI_ENOCQ (%d)", err);
	err = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!err)
		err = fi_ep_bind(s->ep, &av->fid, 0);
	if (!err)
		err = fi_enable(s->ep);
	len = sizeof(s->addr);
	if (!err)
		err = fi_getname(&s->ep->fid, s->addr, &len);
	if (err)
		die("endpoint", err);
	check(len == 8, "fi_getname: an 8-byte address (%zu)", len);
	fi_av_straddr(av, s->addr, s->name, &n);
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

/* The next completion of cq (sread, 20 s), error entries as -err. */
static ssize_t next(struct fid_cq *cq, struct fi_cq_msg_entry *e,
		    fi_addr_t *src, struct fi_cq_err_entry *ee)
{
	ssize_t r = fi_cq_sreadfrom(cq, e, 1, src, NULL, 20000);

	if (r == -FI_EAVAIL && fi_cq_readerr(cq, ee, 0) == 1)
		return -ee->err;
	return r;
}

static int local(void)
{
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	struct fid_av *av, *map;
	struct side a, b;
	fi_addr_t fa[2], fm, src;
	uint8_t bad[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, out[4096], in[4200];
	size_t lens[] = { 1, 96, 97, 4096 };
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry ee;
	ssize_t r;
	int ctx;

	if (fi_av_open(dom, &aa, &av, NULL))
		die("fi_av_open table", -1);
	open_side(&a, av);
	open_side(&b, av);
	r = fi_av_insert(av, a.addr, 1, &fa[0], 0, NULL);
	r += fi_av_insert(av, b.addr, 1, &fa[1], 0, NULL);
	check(r == 2 && fa[0] == 0 && fa[1] == 1, "AV table: indices 0 and 1");
	r = fi_av_insert(av, bad, 1, &src, 0, NULL);
	check(r == 0 && src == FI_ADDR_NOTAVAIL, "AV: a forged address is refused");
	aa.type = FI_AV_MAP;
	if (fi_av_open(dom, &aa, &map, NULL))
		die("fi_av_open map", -1);
	r = fi_av_insert(map, b.addr, 1, &fm, 0, NULL);
	check(r == 1 && fm != FI_ADDR_NOTAVAIL && fm > 1, "AV map: an encoded fi_addr_t");
	fi_close(&map->fid);
	check(fi_send(a.ep, out, 10, NULL, 7, NULL) == -FI_EINVAL,
	      "send to an fi_addr_t not in the AV: -FI_EINVAL");
	check(fi_send(a.ep, out, 4097, NULL, fa[1], NULL) == -FI_EMSGSIZE,
	      "send of 4097 bytes: -FI_EMSGSIZE");
	r = fi_cq_sread(b.cq, &e, 1, NULL, 200);
	check(r == -FI_EAGAIN, "sread with nothing to come: -FI_EAGAIN after its timeout (%zd)", r);
	for (unsigned int i = 0; i < 4; i++) {
		fill(out, lens[i], i);
		memset(in, 0, sizeof(in));
		fi_recv(b.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx);
		r = fi_send(a.ep, out, lens[i], NULL, fa[1], &ctx + 1);
		check(r == 0 && next(a.cq, &e, &src, &ee) == 1 && e.op_context == &ctx + 1 &&
		      (e.flags & FI_SEND), "%zu B: send completes with its context", lens[i]);
		r = next(b.cq, &e, &src, &ee);
		check(r == 1 && e.op_context == &ctx && e.len == lens[i] && (e.flags & FI_RECV) &&
		      src == fa[0] && !memcmp(in, out, lens[i]) && in[lens[i]] == 0,
		      "%zu B: received byte for byte, readfrom names A (%zd, src %llu)", lens[i], r,
		      (unsigned long long)src);
	}
	fill(out, 300, 9);
	memset(in, 0, sizeof(in));
	fi_recv(b.ep, in, 100, NULL, FI_ADDR_UNSPEC, &ctx);
	fi_inject(a.ep, out, 300, fa[1]);
	r = next(b.cq, &e, &src, &ee);
	check(r == -FI_ETRUNC && ee.olen == 200 && ee.len == 100 && !memcmp(in, out, 100) &&
	      in[100] == 0, "300 B into 100: FI_ETRUNC, olen 200, the first 100 kept (%zd)", r);
	fi_recv(b.ep, in, 100, NULL, FI_ADDR_UNSPEC, &ctx);
	check(fi_cancel(&b.ep->fid, &ctx) == 0 && next(b.cq, &e, &src, &ee) == -FI_ECANCELED &&
	      ee.op_context == &ctx, "fi_cancel of a posted receive: FI_ECANCELED completion");
	fi_close(&a.ep->fid);
	fi_close(&b.ep->fid);
	fi_close(&a.cq->fid);
	fi_close(&b.cq->fid);
	return fi_close(&av->fid);
}

static int serve(void)
{
	struct fi_av_attr aa = { .type = FI_AV_MAP };
	uint8_t in[4096], out[4096];
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t src, peer = FI_ADDR_NOTAVAIL;
	struct fid_av *av;
	struct side s;
	int ctx;

	if (fi_av_open(dom, &aa, &av, NULL))
		die("fi_av_open", -1);
	open_side(&s, av);
	write_file("/tmp/fi.addr", s.name);
	for (unsigned int i = 0; i < 3; i++) {
		ssize_t r;

		fi_recv(s.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx);
		r = next(s.cq, &e, &src, &ee);
		if (r != 1)
			die("server: receive", (int)r);
		if (i == 0) {
			char name[64] = { 0 };

			check(src == FI_ADDR_NOTAVAIL, "server: a sender not in the AV is FI_ADDR_NOTAVAIL");
			memcpy(name, in, e.len < 63 ? e.len : 63);
			check(fi_av_insertsvc(av, name, NULL, &peer, 0, NULL) == 1,
			      "server: the client's address %s inserted", name);
		} else {
			fill(out, e.len, i);
			check(src == peer && src != FI_ADDR_NOTAVAIL && !memcmp(in, out, e.len),
			      "server: %zu B from the inserted client (readfrom), checked", e.len);
		}
		fill(out, 1 + i * 2047, 100 + i);
		fi_inject(s.ep, out, 1 + i * 2047, src == FI_ADDR_NOTAVAIL ? peer : src);
	}
	return 0;
}

static int client(const char *server)
{
	struct fi_av_attr aa = { .type = FI_AV_TABLE };
	uint8_t in[4096], out[4096];
	struct fi_cq_msg_entry e;
	struct fi_cq_err_entry ee;
	fi_addr_t srv, src;
	struct fid_av *av;
	struct side s;
	int ctx;

	if (fi_av_open(dom, &aa, &av, NULL))
		die("fi_av_open", -1);
	open_side(&s, av);
	check(fi_av_insertsvc(av, server, NULL, &srv, 0, NULL) == 1, "client: %s inserted", server);
	for (unsigned int i = 0; i < 3; i++) {
		size_t n = i ? (i == 1 ? 96 : 4096) : strlen(s.name);
		ssize_t r;

		if (i)
			fill(out, n, i);
		else
			memcpy(out, s.name, n);
		fi_recv(s.ep, in, sizeof(in), NULL, FI_ADDR_UNSPEC, &ctx);
		if (fi_send(s.ep, out, n, NULL, srv, NULL) || next(s.cq, &e, &src, &ee) != 1)
			die("client: send", -1);
		r = next(s.cq, &e, &src, &ee);
		fill(out, 1 + i * 2047, 100 + i);
		check(r == 1 && e.len == 1 + i * 2047 && src == srv && !memcmp(in, out, e.len),
		      "client: answer %u, %zu B from the server, checked", i, e.len);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int err;

	if (argc < 2) {
		fprintf(stderr, "usage: fi-netvm-test local | server | client ADDR\n");
		return 2;
	}
	open_fabric();
	if (!strcmp(argv[1], "local"))
		err = local();
	else if (!strcmp(argv[1], "server"))
		err = serve();
	else if (!strcmp(argv[1], "client") && argc == 3)
		err = client(argv[2]);
	else
		return 2;
	return err || failures ? 1 : 0;
}
