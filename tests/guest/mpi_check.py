"""An MPI ring and an allreduce, every value checked, in one Python
program that calls the MPI library itself through ctypes, so that the same
program runs on Debian's MPICH (libmpich.so.12) and Open MPI (libmpi.so.40)
-- the guests have no C compiler and mpi4py is built on Open MPI only.
The tests send PROGRAM to the guests (`python3 -c PROGRAM IMPL N L K`).

Handles: MPICH's are fixed integers of its ABI (its mpi.h: MPI_COMM_WORLD
0x44000000, MPI_BYTE 0x4c00010d, MPI_LONG 0x4c000807, MPI_SUM 0x58000003,
MPI_STATUS_IGNORE (MPI_Status *)1); Open MPI's are the addresses of the
objects libmpi exports (ompi_mpi_comm_world, ...), MPI_STATUS_IGNORE NULL.

Each rank prints one line, `line(...)` below, which the tests compare
exactly; the last field names the transport settings the ranks were
started with (Open MPI's MCA parameters, MPICH's UCX variables, from the
environment mpirun gave them).
"""

PROGRAM = r"""
import ctypes, os, socket, sys
impl, N, L, K = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if impl == "mpich":
    lib = ctypes.CDLL("libmpich.so.12", mode=ctypes.RTLD_GLOBAL)
    H = ctypes.c_int
    COMM, BYTE, LONG, SUM, NOSTATUS = 0x44000000, 0x4c00010d, 0x4c000807, 0x58000003, 1
    keys = ("UCX_NET_DEVICES", "UCX_TLS")
else:
    lib = ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
    H = ctypes.c_void_p
    obj = lambda name: ctypes.addressof(ctypes.c_char.in_dll(lib, name))
    COMM, BYTE, LONG, SUM, NOSTATUS = (obj("ompi_mpi_comm_world"), obj("ompi_mpi_byte"),
                                       obj("ompi_mpi_long"), obj("ompi_mpi_op_sum"), None)
    keys = ("OMPI_MCA_pml", "OMPI_MCA_btl", "OMPI_MCA_btl_tcp_if_include")
C = ctypes.c_int
lib.MPI_Comm_rank.argtypes = lib.MPI_Comm_size.argtypes = [H, ctypes.POINTER(C)]
lib.MPI_Sendrecv.argtypes = [ctypes.c_void_p, C, H, C, C, ctypes.c_void_p, C, H, C, C, H,
                             ctypes.c_void_p]
lib.MPI_Allreduce.argtypes = [ctypes.c_void_p, ctypes.c_void_p, C, H, H, H]
def check(rc, what):
    if rc != 0:
        print("%s failed: %d" % (what, rc), flush=True)
        sys.exit(1)
check(lib.MPI_Init(None, None), "MPI_Init")
r, s = C(), C()
check(lib.MPI_Comm_rank(COMM, ctypes.byref(r)), "MPI_Comm_rank")
check(lib.MPI_Comm_size(COMM, ctypes.byref(s)), "MPI_Comm_size")
r, s = r.value, s.value
bad = 0
rbuf = ctypes.create_string_buffer(L)
for i in range(N):
    sbuf = ctypes.create_string_buffer(bytes([(r * 7 + i + j) & 255 for j in range(256)]) * (L // 256), L)
    check(lib.MPI_Sendrecv(sbuf, L, BYTE, (r + 1) % s, i, rbuf, L, BYTE, (r - 1) % s, i, COMM,
                           NOSTATUS), "MPI_Sendrecv")
    p = (r - 1) % s
    bad += rbuf.raw != bytes([(p * 7 + i + j) & 255 for j in range(256)]) * (L // 256)
A = ctypes.c_long * K
mine, sums = A(*[r * 1000003 + i for i in range(K)]), A()
check(lib.MPI_Allreduce(mine, sums, K, LONG, SUM, COMM), "MPI_Allreduce")
wrong = sum(sums[i] != s * i + 1000003 * s * (s - 1) // 2 for i in range(K))
check(lib.MPI_Finalize(), "MPI_Finalize")
print("rank %d of %d on %s: ring %d x %d B, %d bad; allreduce of %d longs, %d wrong; %s"
      % (r, s, socket.gethostname(), N, L, bad, K, wrong,
         " ".join("%s=%s" % (k, os.environ.get(k)) for k in keys)), flush=True)
"""


def transport(impl, iface):
    """The settings `./netvm mpirun --net IFACE` gives the ranks."""
    if impl == "mpich":
        return "UCX_NET_DEVICES=%s UCX_TLS=tcp,self,sm" % iface
    return "OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=%s" % iface


def line(rank, size, node, n, length, k, impl, iface):
    """The line rank RANK must print when everything was right."""
    return ("rank %d of %d on node%d: ring %d x %d B, 0 bad; allreduce of %d longs, 0 wrong; %s"
            % (rank, size, node, n, length, k, transport(impl, iface)))
