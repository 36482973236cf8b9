# Devices of the ASan build (build-qemu.sh --asan, --without-default-devices):
# the pc machine (i440fx, which selects what it needs) and the lanai NIC.
# The device fuzzer and the qtests need nothing else.
CONFIG_I440FX=y
CONFIG_LANAI=y
CONFIG_ISAPC=n
CONFIG_Q35=n
CONFIG_MICROVM=n
CONFIG_NITRO_ENCLAVE=n
