// SPDX-License-Identifier: GPL-2.0-only
/*
 * U-Net any-source channels (docs/unet.md, "Any-source channels"): two
 * firmware instances back to back; B's endpoint takes a tag from anyone
 * and each receive descriptor (or divert record) names the sender.  Every
 * delivered byte and every reported address is checked.
 */
#include <check.h>
#include <string.h>

#include "unet_fixture.h"

#define PORT_A	2
#define PORT_A2	6
#define PORT_B	3
#define TAG_ANY	0x4f464903
#define AREA	(SIM_HOST_BASE + (14u << 20))	/* rxq, then the segment */
#define DIV	(SIM_HOST_BASE + (12u << 20))	/* B's divert ring */
#define ANY_CH	4				/* B's any-source channel */

static struct sim_chip ca, cb;
static struct sim_host ha, hb;
static uint32_t sent[FW_UNET_EPS];	/* send descriptors issued on A */

/* Both endpoints of a chip share its area: only B's receive side is read. */
static uint8_t send_on(struct sim_chip *c, uint32_t port, uint16_t ch,
		       const void *data, uint32_t len)
{
	return uf_send_msg(c, port, &sent[port], AREA, ch, data, len);
}

static void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* Message @n arrived whole on @ch from (@node, @port). */
static void check_rx(uint32_t n, uint32_t ch, uint32_t node, uint32_t port,
		     const uint8_t *msg, uint32_t len)
{
	uf_check_rx(&cb, PORT_B, AREA, n, ch, node, port, msg, len);
}

static void setup(void)
{
	uf_setup(&ca, &cb, &ha, &hb);
	memset(sent, 0, sizeof(sent));
	ck_assert_uint_eq(uf_open(&ha, PORT_A, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_open(&ha, PORT_A2, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_open(&hb, PORT_B, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B, ANY_CH, NVM_UNET_ANY,
				  NVM_UNET_ANY, TAG_ANY, 1), NVM_ST_OK);
	for (uint32_t i = 0; i < 8; i++)
		uf_push_free(&cb, PORT_B, UF_SEG_SZ - (i + 1) * UF_BUF);
}

/* an any-source channel is state that loads (fw_load.c) */
static void teardown(void)
{
	uf_teardown(&ha, &hb);
}

/* Two senders, one after the other, reach the one channel; each is named. */
START_TEST(learns_each_sender)
{
	uint8_t m[NVM_UNET_MSG_MAX];
	uint32_t lens[] = { 1, 96, 97, 4096 };
	uint32_t n = 0;

	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 0, 1, PORT_B, TAG_ANY, 1),
			  NVM_ST_OK);
	for (uint32_t i = 0; i < 4; i++, n++) {
		fill(m, lens[i], n);
		ck_assert_uint_eq(send_on(&ca, PORT_A, 0, m, lens[i]),
				  NVM_UNET_ST_SENT);
		check_rx(n, ANY_CH, 0, PORT_A, m, lens[i]);
	}
	/* a second endpoint of A with the same (node, port, tag), both open:
	 * each message named by its own sender (libfabric's two ranks) */
	ck_assert_uint_eq(uf_chan(&ha, PORT_A2, 3, 1, PORT_B, TAG_ANY, 1),
			  NVM_ST_OK);
	fill(m, 200, n);
	ck_assert_uint_eq(send_on(&ca, PORT_A2, 3, m, 200), NVM_UNET_ST_SENT);
	check_rx(n++, ANY_CH, 0, PORT_A2, m, 200);
	fill(m, 300, n);
	ck_assert_uint_eq(send_on(&ca, PORT_A, 0, m, 300), NVM_UNET_ST_SENT);
	check_rx(n++, ANY_CH, 0, PORT_A, m, 300);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, n);
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], 0);
}
END_TEST

/*
 * The sender is what the sending NI and the link put in the headers,
 * never what the message says: a payload shaped like an address, or a
 * descriptor's reserved words, change nothing.
 */
START_TEST(sender_is_not_the_claim)
{
	struct nvm_unet_send_desc d = { .channel = 0, .len = 8,
					.flags = NVM_UNET_F_INLINE };
	uint8_t claim[8] = { 5, 0, 9, 0, 5, 0, 9, 0 };

	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 0, 1, PORT_B, TAG_ANY, 1),
			  NVM_ST_OK);
	memcpy(d.data, claim, 8);
	d.reserved = 0x0905;
	d.reserved2[0] = d.reserved2[1] = d.reserved2[2] = 0x00090005;
	ck_assert_uint_eq(uf_send(&ca, PORT_A, &sent[PORT_A], &d),
			  NVM_UNET_ST_SENT);
	check_rx(0, ANY_CH, 0, PORT_A, claim, 8);
}
END_TEST

/*
 * The node reported is the packet header's src_node, the one field the
 * link authenticates (docs/security.md): a frame the link delivers as
 * node 7's is node 7's, whatever the U-Net header's port says beside it.
 */
START_TEST(sender_node_from_link_header)
{
	uint8_t f[128], m[24];
	struct nvm_pkt_hdr ph = {
		.type = NVM_PKT_UNET, .version = NVM_PKT_VERSION,
		.src_node = fw_be16(7), .dst_node = fw_be16(1),
		.len = fw_be16(sizeof(struct nvm_unet_hdr) + sizeof(m)),
	};
	struct nvm_unet_hdr uh = {
		.dst_port = fw_be16(PORT_B), .src_port = fw_be16(11),
		.tag = fw_be32(TAG_ANY), .len = fw_be32(sizeof(m)),
	};

	fill(m, sizeof(m), 99);
	memcpy(f, &ph, sizeof(ph));
	memcpy(f + sizeof(ph), &uh, sizeof(uh));
	memcpy(f + sizeof(ph) + sizeof(uh), m, sizeof(m));
	sim_inject(&cb, f, sizeof(ph) + sizeof(uh) + sizeof(m));
	sh_settle();
	check_rx(0, ANY_CH, 7, 11, m, sizeof(m));
	/* another tag is nobody's */
	uh.tag = fw_be32(TAG_ANY + 1);
	memcpy(f + sizeof(ph), &uh, sizeof(uh));
	sim_inject(&cb, f, sizeof(ph) + sizeof(uh) + sizeof(m));
	sh_settle();
	ck_assert_uint_eq(cb.fw.counters[FW_CNT_UNET_NO_CHANNEL], 1);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).rx_prod, 1);
}
END_TEST

/* A channel naming the sender takes its messages before the any-source one. */
START_TEST(named_channel_first)
{
	uint8_t m[40];

	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 1, 0, PORT_A, TAG_ANY, 1),
			  NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A, 0, 1, PORT_B, TAG_ANY, 1),
			  NVM_ST_OK);
	fill(m, sizeof(m), 3);
	ck_assert_uint_eq(send_on(&ca, PORT_A, 0, m, sizeof(m)),
			  NVM_UNET_ST_SENT);
	check_rx(0, 1, 0, PORT_A, m, sizeof(m));
	/* closed, the any-source channel takes them again */
	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 1, 0, 0, 0, 0), NVM_ST_OK);
	ck_assert_uint_eq(send_on(&ca, PORT_A, 0, m, sizeof(m)),
			  NVM_UNET_ST_SENT);
	check_rx(1, ANY_CH, 0, PORT_A, m, sizeof(m));
}
END_TEST

/* It only receives; its tag is unique per endpoint; half-any is refused. */
START_TEST(any_rules)
{
	uint8_t m[8] = "nobody!";

	ck_assert_uint_eq(send_on(&cb, PORT_B, ANY_CH, m, 8),
			  NVM_UNET_ST_BAD_CHANNEL);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).send_errors, 1);
	ck_assert_uint_ne(uf_chan(&hb, PORT_B, 5, NVM_UNET_ANY, NVM_UNET_ANY,
				  TAG_ANY, 1), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B, 5, NVM_UNET_ANY, NVM_UNET_ANY,
				  TAG_ANY + 1, 1), NVM_ST_OK);
	ck_assert_uint_ne(uf_chan(&hb, PORT_B, 6, NVM_UNET_ANY, 2,
				  TAG_ANY + 2, 1), NVM_ST_OK);
	ck_assert_uint_ne(uf_chan(&hb, PORT_B, 6, 0, NVM_UNET_ANY,
				  TAG_ANY + 2, 1), NVM_ST_OK);
	/* another endpoint may take the same tag from anyone */
	ck_assert_uint_eq(uf_open(&hb, PORT_B + 1, AREA), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&hb, PORT_B + 1, 0, NVM_UNET_ANY,
				  NVM_UNET_ANY, TAG_ANY, 1), NVM_ST_OK);
}
END_TEST

/* A diverted message names its sender in the divert record. */
START_TEST(diverted_names_sender)
{
	uint8_t m[40];

	ck_assert_uint_eq(uf_divert_ring(&hb, DIV, 8), NVM_ST_OK);
	ck_assert_uint_eq(uf_chan(&ha, PORT_A2, 0, 1, PORT_B, TAG_ANY, 1),
			  NVM_ST_OK);
	uf_ctl(&cb, PORT_B)->desched = 1;	/* the owner is not running */
	fill(m, sizeof(m), 5);
	ck_assert_uint_eq(send_on(&ca, PORT_A2, 0, m, sizeof(m)),
			  NVM_UNET_ST_SENT);
	ck_assert_uint_eq(uf_status(&cb, PORT_B).diverted, 1);
	{
		struct nvm_unet_div_rec *r =
			(struct nvm_unet_div_rec *)sim_host(&cb, DIV);

		ck_assert_uint_eq(r->seq, 1);
		ck_assert_uint_eq(r->port, PORT_B);
		ck_assert_uint_eq(r->channel, ANY_CH);
		ck_assert_uint_eq(r->src_node, 0);
		ck_assert_uint_eq(r->src_port, PORT_A2);
		ck_assert_uint_eq(r->len, sizeof(m));
		ck_assert_mem_eq(r->data, m, sizeof(m));
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("firmware-unet-any");
	TCase *t = tcase_create("any-source");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, learns_each_sender);
	tcase_add_test(t, sender_is_not_the_claim);
	tcase_add_test(t, sender_node_from_link_header);
	tcase_add_test(t, named_channel_first);
	tcase_add_test(t, any_rules);
	tcase_add_test(t, diverted_names_sender);
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
