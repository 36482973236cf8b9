// SPDX-License-Identifier: GPL-2.0-only
/*
 * netvm.ko: the probe-time self-test, run while the firmware is halted.
 *
 *  1. register access: NVM_REG_SCRATCH reads back what was written;
 *  2. device -> host DMA: ST FILL writes nvm_st_pattern(seed, i);
 *  3. host -> device -> host DMA: ST INVERT inverts the buffer in place;
 *  4. MSI-X: NVM_REG_ST_IRQ raises vector LANAI_MSIX_SELFTEST.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/random.h>

#include "netvm_drv.h"

#define NETVM_ST_LEN		NVM_ST_MAX_LEN
#define NETVM_ST_TIMEOUT_MS	1000

irqreturn_t netvm_selftest_irq(int irq, void *data)
{
	struct netvm_dev *nd = data;

	complete(&nd->st_irq_done);
	return IRQ_HANDLED;
}

static int netvm_st_scratch(struct netvm_dev *nd)
{
	static const u32 fixed[] = { 0x00000000, 0xffffffff, 0xa5a5a5a5,
				     0x5a5a5a5a };
	u32 val, got;
	int i;

	for (i = 0; i <= ARRAY_SIZE(fixed); i++) {
		val = i < ARRAY_SIZE(fixed) ? fixed[i] : get_random_u32();
		netvm_wr(nd, NVM_REG_SCRATCH, val);
		got = netvm_rd(nd, NVM_REG_SCRATCH);
		if (got != val) {
			dev_err(&nd->pdev->dev,
				"netvm: self-test failed: scratch register wrote %#x, read %#x\n",
				val, got);
			return -EIO;
		}
	}
	return 0;
}

static int netvm_st_run(struct netvm_dev *nd, u32 cmd, const char *name)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(NETVM_ST_TIMEOUT_MS);
	u32 status;

	netvm_wr(nd, NVM_REG_ST_CMD, cmd);
	for (;;) {
		status = netvm_rd(nd, NVM_REG_ST_STATUS);
		if (status == NVM_ST_STATUS_DONE)
			return 0;
		if (status == NVM_ST_STATUS_ERROR) {
			dev_err(&nd->pdev->dev,
				"netvm: self-test failed: DMA %s reported an error\n",
				name);
			return -EIO;
		}
		if (time_after(jiffies, deadline)) {
			dev_err(&nd->pdev->dev,
				"netvm: self-test failed: DMA %s timed out (status %u)\n",
				name, status);
			return -EIO;
		}
		usleep_range(100, 200);
	}
}

static int netvm_st_dma(struct netvm_dev *nd)
{
	struct device *dev = &nd->pdev->dev;
	dma_addr_t dma;
	u8 *buf;
	u32 seed, i;
	int ret;

	buf = dma_alloc_coherent(dev, NETVM_ST_LEN, &dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	seed = get_random_u32();

	netvm_wr(nd, NVM_REG_ST_ADDR_LO, lower_32_bits(dma));
	netvm_wr(nd, NVM_REG_ST_ADDR_HI, upper_32_bits(dma));
	netvm_wr(nd, NVM_REG_ST_LEN, NETVM_ST_LEN);
	netvm_wr(nd, NVM_REG_ST_SEED, seed);

	ret = netvm_st_run(nd, NVM_ST_CMD_FILL, "fill");
	if (ret)
		goto out;
	dma_rmb();
	for (i = 0; i < NETVM_ST_LEN; i++) {
		if (buf[i] != nvm_st_pattern(seed, i)) {
			dev_err(dev,
				"netvm: self-test failed: DMA fill pattern mismatch at byte %u (got %#04x, want %#04x)\n",
				i, buf[i], nvm_st_pattern(seed, i));
			ret = -EIO;
			goto out;
		}
	}

	ret = netvm_st_run(nd, NVM_ST_CMD_INVERT, "invert");
	if (ret)
		goto out;
	dma_rmb();
	for (i = 0; i < NETVM_ST_LEN; i++) {
		u8 want = (u8)~nvm_st_pattern(seed, i);

		if (buf[i] != want) {
			dev_err(dev,
				"netvm: self-test failed: DMA invert mismatch at byte %u (got %#04x, want %#04x)\n",
				i, buf[i], want);
			ret = -EIO;
			goto out;
		}
	}
out:
	netvm_wr(nd, NVM_REG_ST_LEN, 0);
	dma_free_coherent(dev, NETVM_ST_LEN, buf, dma);
	return ret;
}

static int netvm_st_irq(struct netvm_dev *nd)
{
	reinit_completion(&nd->st_irq_done);
	netvm_wr(nd, NVM_REG_ST_IRQ, LANAI_MSIX_SELFTEST);
	if (!wait_for_completion_timeout(&nd->st_irq_done,
					 msecs_to_jiffies(NETVM_ST_TIMEOUT_MS))) {
		dev_err(&nd->pdev->dev,
			"netvm: self-test failed: no interrupt on MSI-X vector %d\n",
			LANAI_MSIX_SELFTEST);
		return -EIO;
	}
	return 0;
}

int netvm_selftest(struct netvm_dev *nd)
{
	int ret;

	ret = netvm_st_scratch(nd);
	if (!ret)
		ret = netvm_st_dma(nd);
	if (!ret)
		ret = netvm_st_irq(nd);
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return -EIO;
	dev_dbg(&nd->pdev->dev, "self-test passed\n");
	return 0;
}
