"""Analytic models the plots and the validation compare fabricsim with, each
written once: the alpha-beta (Hockney) time of a collective and the credit
loop's bound on a link's throughput. docs/validation.md (cases 6 and 8)
derives both from the models' documented parts; nothing here is fitted.

Every function takes the parameters it needs; the *_of_config variants read
them from a stats.json `config` section (the values the run used).
"""
import math

# --- credit loop --------------------------------------------------------------


def credit_rtt_ns(latency_ns, flit_ns, cycle_ns, packet_flits):
    """The credit round trip of a packet into a switch input at zero load
    (switch.md, link.md), with L the link latency, f the flit time and P the
    packet's flits: its head is complete L + f after it leaves, waits for the
    next clock edge (half a cycle on average: a sender paced by returning
    credits is off the clock grid), the crossbar moves its P flits (the
    buffer space and the credits are freed when it is done; the switch
    pipeline comes after, outside the loop), and the credits take L back:
    RTT = 2L + (P + 1) f + cycle / 2. With 1-flit packets and cycle = f this
    is validation case 6's 2L + 2.5 f. Under load, allocation waits lengthen
    it: the bound below is an upper bound."""
    return 2 * latency_ns + (packet_flits + 1) * flit_ns + cycle_ns / 2


def credit_bound(buffer_flits, latency_ns, flit_ns, cycle_ns, packet_flits, vcs=1):
    """The most a link can carry (flits per flit time) with an input buffer
    of B flits split over its VCs: a sender needs credits for a whole packet,
    so each VC has floor(B / vcs / P) packets in flight per round trip, and
    all VCs carry traffic (synthetic sources pick a VC at random, endpoint.md):
    min(1, vcs floor(B / vcs / P) P f / RTT)."""
    in_flight = vcs * (buffer_flits // vcs // packet_flits) * packet_flits
    return min(1.0, in_flight * flit_ns / credit_rtt_ns(latency_ns, flit_ns, cycle_ns,
                                                         packet_flits))


def buffer_needed_flits(load, latency_ns, flit_ns, cycle_ns, packet_flits, vcs=1):
    """The smallest input buffer (flits, whole packets per VC) whose credit
    bound reaches `load`: B >= load x RTT / f, rounded up to packets per VC."""
    rtt = credit_rtt_ns(latency_ns, flit_ns, cycle_ns, packet_flits)
    packets = math.ceil(load * rtt / flit_ns / packet_flits / vcs - 1e-9)
    return packets * packet_flits * vcs


def credit_params_of_config(cfg, flit_ns, cycle_ns):
    """(latency_ns, flit_ns, cycle_ns, packet_flits, vcs) of a single-switch
    run: flit_ns and cycle_ns as stats.json's sim section rounds them."""
    return (cfg["link.latency_ns"], flit_ns, cycle_ns, cfg["traffic.packet_flits"],
            cfg["switch.vcs"])


# --- collectives: alpha-beta (Hockney) ------------------------------------------

def alpha_ns(latency_ns, flit_ns, cycle_ns, pipeline_cycles, packet_flits):
    """Zero-load time of one packet from GPU to GPU through one switch
    (switch.md, "Zero-load latency"): the head flit is complete L + f after
    it leaves, at the next clock edge it is allocated, the pipeline takes
    P cycles, then L and the packet's flits on the output link."""
    edge = math.ceil((latency_ns + flit_ns) / cycle_ns - 1e-9) * cycle_ns
    return edge + pipeline_cycles * cycle_ns + latency_ns + packet_flits * flit_ns


# (op, algorithm) -> (flits a GPU moves in its busiest direction per slice of
# the call's size, as a function of n and the packet's flits P; latency steps k).
# docs/validation.md, case 8, explains each row.
STEPS = {
    ("all_reduce", "ring"): (lambda n, p: 2 * (n - 1) / n * p, lambda n: 2 * (n - 1)),
    ("reduce_scatter", "ring"): (lambda n, p: (n - 1) / n * p, lambda n: n - 1),
    ("all_gather", "ring"): (lambda n, p: (n - 1) / n * p, lambda n: n - 1),
    ("all_reduce", "direct"): (lambda n, p: (n - 1) * p, lambda n: 1),
    ("all_reduce", "push"): (lambda n, p: p, lambda n: 1),
    ("all_gather", "nvls"): (lambda n, p: p, lambda n: 1),
    # the multicast copy, the GPU's own reduced share, one read request per address
    ("all_reduce", "nvls"): (lambda n, p: p + p / n + 1, lambda n: 3),
}


def has_model(op, algorithm):
    return (op, algorithm) in STEPS


def flits_and_steps(op, algorithm, gpus, packet_flits):
    """(flits per slice in the busiest direction, latency steps k)."""
    flits, steps = STEPS[(op, algorithm)]
    return flits(gpus, packet_flits), steps(gpus)


def collective_time_ns(size_bytes, op, algorithm, gpus, links_per_gpu, latency_ns, flit_ns,
                       cycle_ns, pipeline_cycles, payload_bytes, flit_bytes):
    """T = k alpha + S / payload x flits x f / links: k latency steps of one
    packet (alpha) plus the flits a GPU moves in its busiest direction at its
    links' raw rate (headers included)."""
    packet_flits = payload_bytes // flit_bytes + 1
    flits, steps = flits_and_steps(op, algorithm, gpus, packet_flits)
    a = alpha_ns(latency_ns, flit_ns, cycle_ns, pipeline_cycles, packet_flits)
    return steps * a + size_bytes / payload_bytes * flits * flit_ns / links_per_gpu


def collective_params_of_config(cfg, flit_ns, cycle_ns):
    """The keyword arguments of collective_time_ns but size, op, algorithm and
    gpus, from a stats.json config (a scale-up fabric or a single switch)."""
    links = cfg.get("topology.links")
    if isinstance(links, list):
        links_per_gpu = sum(links)
    elif isinstance(links, (int, float)):
        links_per_gpu = int(links)
    else:
        links_per_gpu = 1
    return dict(links_per_gpu=links_per_gpu, latency_ns=cfg["link.latency_ns"], flit_ns=flit_ns,
                cycle_ns=cycle_ns, pipeline_cycles=cfg["switch.pipeline_cycles"],
                payload_bytes=cfg["collective.payload_bytes"], flit_bytes=cfg["link.flit_bytes"])
