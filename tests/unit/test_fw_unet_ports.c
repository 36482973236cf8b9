// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net channels are per endpoint (docs/unet.md, "Tags"): two firmware
 * instances back to back, two endpoints on each, each endpoint with its
 * own receive queue and segment in the simulated host memory.  Endpoints
 * of one NIC may hold channels with the same (node, port, tag); a frame
 * reaches only the endpoint it names, and there only the channel that
 * matches its sender and tag.  Every delivered byte is checked.
 */
#include <check.h>
#include <string.h>

#include "unet_fixture.h"

#define PORT_A1	2
#define PORT_A2	6
#define PORT_B1	3
#define PORT_B2	4
#define TAG	0x51a7e
/* each endpoint's receive queue, then its segment, 512 KiB apart */
#define AREA(port)	(UF_AREAS + (port) * (512u << 10))

static struct sim_chip ca, cb;
static struct sim_host ha, hb;
static uint32_t sent[FW_UNET_EPS];	/* send descriptors issued, per port */

/* A send on @port of chip @c: inline, or from segment offset 0. */
static uint8_t send_on(struct sim_chip *c, uint32_t port, uint16_t ch,
		       const void *data, uint32_t len)
{
	return uf_send_msg(c, port, &sent[port], AREA(port), ch, data, len);
}

static void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

/* Message @n of B's endpoint @port arrived whole on @ch from node 0's @from. */
static void check_rx(uint32_t port, uint32_t n, uint32_t ch, uint32_t from,
		     const uint8_t *msg, uint32_t len)
{
	uf_check_rx(&cb, port, AREA(port), n, ch, 0, from, msg, len);
}

/*
 * Node 0: A1 and A2 each with channel 0 to (1, B1, TAG) -- the same
 * (node, port, tag) on one NIC.  Node 1: B1 with channel 0 from A1 and
 * channel 1 from A2 (one endpoint, one node, one tag, two ports); B2 with
 * channel 0 from A1 (B1's channel 0's triple, on another endpoint).
 */
static void setup(void)
{
	uf_setup(&ca, &cb, &ha, &hb);
	memset(sent, 0, sizeof(sent));
	ck_assert_uint_eq(uf_open(&ha, PORT_A1, AREA(PORT_A1)), NVM_ST_OK);
	ck_assert_uint_eq(uf_open(&ha, PORT_A2, AREA(PORT_A2)), NVM_ST_OK);
	ck_assert_uint_eq(uf_open(&hb, PORT_B1, AREA(PORT_B1)), NVM_ST_OK);
	ck_assert_uint_eq(uf_open(&hb, PORT_B2, AREA(PORT_B2)), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A1, 0, 1, PORT_B1, TAG, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A2, 0, 1, PORT_B1, TAG, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B1, 0, 0, PORT_A1, TAG, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B1, 1, 0, PORT_A2, TAG, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B2, 0, 0, PORT_A1, TAG, 1),
			  NVM_ST_OK);
	for (uint32_t i = 0; i < 8; i++) {
		uf_push_free(&cb, PORT_B1, UF_SEG_SZ - (i + 1) * UF_BUF);
		uf_push_free(&cb, PORT_B2, UF_SEG_SZ - (i + 1) * UF_BUF);
	}
}

static void teardown(void)
{
	uf_teardown(&ha, &hb);
}

/* Two senders of one NIC on the same (node, port, tag), interleaved. */
START_TEST(two_senders_one_triple)
{
	uint32_t lens[] = { 1, 96, 97, 4096, 2500, 40 };
	uint8_t m[NVM_UNET_MSG_MAX];
	uint32_t got1 = 0, got2 = 0;

	for (uint32_t i = 0; i < 6; i++) {
		uint32_t from = i % 2 ? PORT_A2 : PORT_A1;

		fill(m, lens[i], i + 1);
		ck_assert_uint_eq(send_on(&ca, from, 0, m, lens[i]),
				  NVM_UNET_ST_SENT);
		/* each on B1's channel for its own sender */
		check_rx(PORT_B1, got1++, i % 2, from, m, lens[i]);
	}
	ck_assert_uint_eq(uf_status(&cb, PORT_B1).rx_prod, got1);
	/* B2 has A1's triple too, but no frame named B2 */
	ck_assert_uint_eq(uf_status(&cb, PORT_B2).rx_prod, got2);
	ck_assert_uint_eq(uf_status(&cb, PORT_B2).msgs, 0);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], 0);
}
END_TEST

/* Two receivers of one NIC with the same triple: each gets its own. */
START_TEST(two_receivers_one_triple)
{
	uint8_t m1[3000], m2[80];

	/* A1 to both B1 and B2 with one tag: two channels of one endpoint */
	ck_assert_uint_eq(uf_chan(&ha, PORT_A1, 1, 1, PORT_B2, TAG, 1),
			  NVM_ST_OK);
	fill(m1, sizeof(m1), 11);
	fill(m2, sizeof(m2), 12);
	ck_assert_uint_eq(send_on(&ca, PORT_A1, 1, m1, sizeof(m1)),
			  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(send_on(&ca, PORT_A1, 0, m2, sizeof(m2)),
			  NVM_UNET_ST_SENT);
	check_rx(PORT_B2, 0, 0, PORT_A1, m1, sizeof(m1));
	check_rx(PORT_B1, 0, 0, PORT_A1, m2, sizeof(m2));
	ck_assert_uint_eq(uf_status(&cb, PORT_B1).rx_prod, 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B2).rx_prod, 1);
	/* B1's buffers untouched by B2's message (its own segment) */
	ck_assert_uint_eq(uf_status(&cb, PORT_B1).free_cons, 0);
	ck_assert_uint_eq(uf_status(&cb, PORT_B2).free_cons, 3);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], 0);
}
END_TEST

/* One endpoint asking for a triple it holds: refused, exactly BAD_CMD. */
START_TEST(same_endpoint_twice_refused)
{
	uint8_t m[8] = "again!!";

	ck_assert_uint_eq(uf_chan(&ha, PORT_A1, 1, 1, PORT_B1, TAG, 1),
			  NVM_ST_BAD_CMD);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B1, 2, 0, PORT_A2, TAG, 1),
			  NVM_ST_BAD_CMD);
	/* any-source: the same rule on (ANY, ANY, tag) */
	ck_assert_uint_eq(uf_chan(&hb, PORT_B2, 5, NVM_UNET_ANY, NVM_UNET_ANY,
				  TAG, 1), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B2, 6, NVM_UNET_ANY, NVM_UNET_ANY,
				  TAG, 1), NVM_ST_BAD_CMD);
	/* the refused channel stays closed: a send on it is refused */
	ck_assert_uint_eq(send_on(&ca, PORT_A1, 1, m, 8),
			  NVM_UNET_ST_BAD_CHANNEL);
	/* another tag, or another port, is a channel of its own */
	ck_assert_uint_eq(uf_chan(&ha, PORT_A1, 1, 1, PORT_B1, TAG + 1, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A1, 2, 1, PORT_B2, TAG, 1),
			  NVM_ST_OK);
	/* closed, the triple can be had again */
	ck_assert_uint_eq(uf_chan(&ha, PORT_A1, 0, 0, 0, 0, 0), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A1, 3, 1, PORT_B1, TAG, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(send_on(&ca, PORT_A1, 3, m, 8), NVM_UNET_ST_SENT);
	check_rx(PORT_B1, 0, 0, PORT_A1, m, 8);
}
END_TEST

/* A frame as if from node 0's @from to node 1's @to, with @tag. */
static void inject(uint32_t from, uint32_t to, uint32_t tag,
		   const uint8_t *m, uint32_t len)
{
	uint8_t f[256];
	struct nvm_pkt_hdr ph = {
		.type = NVM_PKT_UNET, .version = NVM_PKT_VERSION,
		.src_node = fw_be16(0), .dst_node = fw_be16(1),
		.len = fw_be16(sizeof(struct nvm_unet_hdr) + len),
	};
	struct nvm_unet_hdr uh = {
		.dst_port = fw_be16(to), .src_port = fw_be16(from),
		.tag = fw_be32(tag), .len = fw_be32(len),
	};

	ck_assert_uint_le(sizeof(ph) + sizeof(uh) + len, sizeof(f));
	memcpy(f, &ph, sizeof(ph));
	memcpy(f + sizeof(ph), &uh, sizeof(uh));
	memcpy(f + sizeof(ph) + sizeof(uh), m, len);
	sim_inject(&cb, f, sizeof(ph) + sizeof(uh) + len);
	sh_settle();
}

/*
 * A frame reaches only the endpoint it names and only a matching channel
 * there: B1's channel from A2 does not take A2's frame named to B2, nor
 * B2's channel from A1 a frame of A1 named to a closed port.
 */
START_TEST(no_channel_at_the_named_endpoint)
{
	uint8_t m[48];
	uint32_t drop = cb.fw.counters[FW_CNT_UNET_NO_CHANNEL];

	fill(m, sizeof(m), 21);
	/* B1 has (0, A2, TAG); B2 does not */
	inject(PORT_A2, PORT_B2, TAG, m, sizeof(m));
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], drop + 1);
	/* both have (0, A1, TAG); port 9 is closed */
	inject(PORT_A1, 9, TAG, m, sizeof(m));
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], drop + 2);
	/* past the port table: no endpoint's, no kernel's */
	inject(PORT_A1, 0xfffe, TAG, m, sizeof(m));
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], drop + 3);
	/* B2 with another tag than its channel's */
	inject(PORT_A1, PORT_B2, TAG + 1, m, sizeof(m));
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], drop + 4);
	ck_assert_uint_eq(uf_status(&cb, PORT_B1).msgs, 0);
	ck_assert_uint_eq(uf_status(&cb, PORT_B2).msgs, 0);
	/* and the right frame still goes where it names */
	inject(PORT_A2, PORT_B1, TAG, m, sizeof(m));
	check_rx(PORT_B1, 0, 1, PORT_A2, m, sizeof(m));
	ck_assert_uint_eq(uf_status(&cb, PORT_B2).msgs, 0);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], drop + 4);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("firmware-unet-ports");
	TCase *t = tcase_create("per-endpoint channels");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, two_senders_one_triple);
	tcase_add_test(t, two_receivers_one_triple);
	tcase_add_test(t, same_endpoint_twice_refused);
	tcase_add_test(t, no_channel_at_the_named_endpoint);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *r = srunner_create(suite());
	int failed;

	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
