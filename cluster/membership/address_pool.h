// SmartConnect-style address pools (Isilon OneFS): a pool of client addresses spread over the
// nodes, so clients that resolve the pool's name round robin land on node 1, then node 2, ...,
// and the addresses of a node that fails move to the survivors and come back when it returns.
//
// assign_pool is the pure rule every node applies to its own view of which nodes are alive:
//   * address i's home is nodes[i mod n] (the first addresses on the first node, the next on
//     the next, as the SFS2014 report's dataflow put its clients);
//   * an address whose home is alive is served by its home: nothing moves while nodes are up,
//     and a returning node gets its addresses back;
//   * the addresses of dead nodes go, one at a time in address order, to the alive node that
//     has the fewest addresses so far (ties: the first alive node after the home in node
//     order), so the survivors stay balanced within one address;
//   * with no node alive, nobody serves (empty owner).
// Nodes whose views agree compute the same owners. A short disagreement (a node not yet known
// dead) means two nodes try to bind one address: VirtualServer::claim on the newcomer retries
// until the other lets it go. Pool addresses reach every volume (forwarding), so serving an
// address from the "wrong" node is never a data-safety question, only one of balance.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nasd::membership {

// address -> node serving it ("" when none is alive).
std::map<std::string, std::string> assign_pool(const std::vector<std::string>& addresses,
                                               const std::vector<std::string>& nodes,
                                               const std::set<std::string>& alive);

}  // namespace nasd::membership
