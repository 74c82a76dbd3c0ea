#pragma once
// Files and byte messages moved between two ranks over MPI, in chunks of kTransferChunkBytes with
// one buffer on each side, so memory stays bounded however large the files: how a part of the
// merge tree reaches a leader whose folder is not the sender's (finalize_merge.hpp). PMPI on the
// finalize's private communicator, so no message of the application's can match.
#include "mpi_header.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace commlens::pmpi {

inline constexpr std::size_t kTransferChunkBytes = std::size_t{4} << 20;

// A message whose size the receiver learns by probing; the receiver waits for it as
// wait_for_message does.
void send_bytes(MPI_Comm comm, int receiver, int tag, const std::vector<std::uint8_t>& bytes);
std::vector<std::uint8_t> receive_bytes(MPI_Comm comm, int sender, int tag);

// Waits for a message from `sender` without keeping a core busy: tests, then sleeps a while
// (doubling up to 5 ms) between tests. A rank waiting for another's merge shares the node's cores
// with it, and where ranks outnumber cores a spinning wait (as MPI's own) would slow that merge.
void wait_for_message(MPI_Comm comm, int sender, int tag);

// Completes a nonblocking operation, waiting as wait_for_message does.
void wait_without_spinning(MPI_Request& request);

// Sends the files, of the sizes announced to the receiver, in order. A file that cannot be read
// whole ends the stream with an abort message, after which nothing more is sent: returns false
// then, with the reason in `why`.
bool send_files(MPI_Comm comm, int receiver, const std::vector<std::string>& paths,
                const std::vector<std::uint64_t>& sizes, std::string& why);

// Receives what send_files sends into `paths` (created or truncated). False, with the reason in
// `why`, when the sender aborted or a file could not be written (every message of the stream is
// received either way, so the two ranks stay in step); the files written so far are removed then.
bool receive_files(MPI_Comm comm, int sender, const std::vector<std::string>& paths,
                   const std::vector<std::uint64_t>& sizes, std::string& why);

} // namespace commlens::pmpi
