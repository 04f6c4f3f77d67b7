package org.sparkccl.transport.ucx;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.sparkccl.CclException;
import org.sparkccl.transport.FailureNotice;

/**
 * What both ends of a UCX ring connection share: the endpoints to the peer, the peer's unpacked
 * remote keys, this channel's side area, the notices the peer sent, and the release of all of it.
 * Every method that calls UCX runs on the proxy thread (or on the closing thread once the proxy
 * thread has stopped); other threads go through {@link UcxTransport#onProxy}.
 */
abstract class UcxConnection {

  protected final UcxTransport transport;
  protected final String description;
  protected final int peer;
  protected final int channel;
  protected final ByteBuffer side;
  protected final long sideAddress;
  protected final UcpEndpoint[] endpoints;

  /** The peer's side area, unpacked on each endpoint. */
  protected final UcpRemoteKey[] peerSide;

  protected final long peerSideAddress;

  /** This connection's FIFO slots, registered once by the transport, which releases them. */
  protected final UcpMemory slots;

  /** A notice UCX may still read from: kept reachable until its send completes. */
  private record Notice(ByteBuffer bytes, UcpRequest request, Completion completion) {}

  private final List<Notice> noticesInFlight = new ArrayList<>();

  /** Signs the notices this end sends; checks those its peer sends. */
  private final NoticeMac outMac;

  private final NoticeMac inMac;
  private final boolean sendingEnd;
  private long sentNotices;
  private long lastNotice = -1;
  private boolean peerProven;
  private String remoteFailure;
  private String endpointError;
  protected boolean peerClosed;

  /** The peer answered this end's close: it puts nothing more into this rank's memory. */
  private boolean peerSawClose;

  /**
   * This end sent the peer its own close or failure notice, which tells the peer all a {@link
   * ControlInbox#CLOSE_SEEN} would: an answer besides it found the peer's inbox already closed, and
   * UCX warned of it unmatched when the peer's worker went.
   */
  private boolean toldPeerItStopped;

  private boolean closed;

  UcxConnection(
      UcxTransport transport,
      String description,
      int peer,
      int channel,
      int nEndpoints,
      UcxRankInfo peerInfo,
      UcpMemory slots,
      boolean sendingEnd) {
    this.transport = transport;
    this.description = description;
    this.peer = peer;
    this.channel = channel;
    this.side = transport.side(channel);
    this.sideAddress = transport.sideAddress(channel);
    this.slots = slots;
    this.endpoints = new UcpEndpoint[nEndpoints];
    this.peerSide = new UcpRemoteKey[nEndpoints];
    this.peerSideAddress = peerInfo.sideAreas()[channel].address();
    this.sendingEnd = sendingEnd;
    byte[] secret = transport.secret();
    this.outMac = new NoticeMac(secret, transport.rank(), peer, channel, !sendingEnd);
    this.inMac = new NoticeMac(secret, peer, transport.rank(), channel, sendingEnd);
    try {
      for (int i = 0; i < nEndpoints; i++) {
        endpoints[i] =
            transport.newEndpoint(peerInfo.workerAddress(), description + " ep" + i, this);
        peerSide[i] = transport.unpack(endpoints[i], peerInfo.sideAreas()[channel], description);
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The worker is the proxy thread's: no kernel may move this connection's requests. */
  public boolean progressedByOwner() {
    return true;
  }

  public int peer() {
    return peer;
  }

  /** UCX told this endpoint it failed (on the proxy thread, inside progress). */
  void onEndpointError(int status, String message) {
    if (!peerClosed && !closed && endpointError == null) {
      endpointError = "UCX endpoint error: " + message + " (UCS status " + status + ")";
      transport.raise(
          new CclException(description + ": " + endpointError + " (did the peer process die?)"));
    }
  }

  /**
   * Whether {@code notice[0, length)} followed by its MAC is a notice the peer signed with this
   * direction's key, with a counter above every one accepted before (so none is replayed). The
   * first accepted notice proves that the peer holds the communicator's secret.
   */
  boolean accept(byte[] notice, int length, long counter) {
    if (counter <= lastNotice || !inMac.verify(notice, length)) {
      return false;
    }
    lastNotice = counter;
    peerProven = true;
    return true;
  }

  /**
   * Whether a notice signed by the peer arrived (it holds the communicator's secret) and this end's
   * own notices have gone out (so the peer's proof of this end needs no more progress here).
   */
  boolean provenBothWays() {
    noticesInFlight.removeIf(n -> n.completion().isDone(n.request()));
    return peerProven && noticesInFlight.isEmpty();
  }

  /** Sends the notice that proves this end holds the communicator's secret. */
  void sendProof() {
    sendNotice(ControlInbox.HELLO, new byte[0]);
  }

  /** Whether this end was released ({@link #release}): nothing may call UCX for it any more. */
  protected boolean isClosed() {
    return closed;
  }

  /** Puts from this side area into the peer's on endpoint 0 (offsets of {@link UcxLayout}). */
  protected final SidePut toPeerSide = this::putToPeerSide;

  private void putToPeerSide(int localOffset, int length, int remoteOffset) {
    endpoints[0].putNonBlockingImplicit(
        sideAddress + localOffset, length, peerSideAddress + remoteOffset, peerSide[0]);
  }

  /** A notice from the peer arrived and checked (on the proxy thread, inside progress). */
  void onNotice(int type, byte[] payload) {
    if (type == ControlInbox.FAIL) {
      String text = new String(payload, StandardCharsets.UTF_8);
      if (remoteFailure == null) {
        remoteFailure = text;
        transport.raise(FailureNotice.raise(text));
      }
    } else if (type == ControlInbox.CLOSE) {
      if (!peerClosed) {
        peerClosed = true;
        transport.answerClose(this);
      }
    } else if (type == ControlInbox.CLOSE_SEEN) {
      peerSawClose = true;
    }
  }

  /**
   * Answers the peer's close, once: from now on this end puts nothing into the peer's memory (posts
   * and side-area puts check {@link #peerClosed}), and the flush lands what it put before, so the
   * peer may free its memory once it has the answer. Proxy thread only, outside the inbox's poll.
   */
  void acknowledgeClose() {
    if (!toldPeerItStopped) {
      sendNoticeAfterPuts(ControlInbox.CLOSE_SEEN, new byte[0]);
    }
  }

  /** Whether the peer answered this end's close ({@link ControlInbox#CLOSE_SEEN}). */
  boolean peerAnsweredClose() {
    return peerSawClose;
  }

  protected boolean hasRemoteFailure() {
    return remoteFailure != null;
  }

  /**
   * Whether the peer said it stopped (it failed or closed) or that it saw this end close: it puts
   * nothing more into this rank's memory, which may then be freed. Both ends write there: a sender
   * that saw an entry puts the step into this rank's slots and its record into the side area; a
   * receiver puts its entries and announcements into the side area, and a sender the count of
   * announcements it read. A receiver that has not yet heard of a failure or a close still posts
   * the entries of the steps it expects, into a side area that may be freed by then.
   */
  boolean peerStopped() {
    return peerClosed || remoteFailure != null || peerSawClose;
  }

  /** Throws what the peer or UCX reported about this connection. */
  protected void checkFailed() {
    if (remoteFailure != null) {
      throw FailureNotice.raise(remoteFailure);
    }
    if (endpointError != null) {
      throw new CclException(description + ": " + endpointError);
    }
  }

  /**
   * Flushes endpoint 0, so that what this end put before has landed when the peer acts on the
   * notice, then sends it ({@link UcxTransport#flushBeforeNotice}). Proxy thread only.
   */
  protected void sendNoticeAfterPuts(int type, byte[] body) {
    if (closed) {
      return;
    }
    transport.flushBeforeNotice(endpoints[0], description);
    sendNotice(type, body);
  }

  /** Sends a notice to the peer on endpoint 0; best effort, never waits. Proxy thread only. */
  protected void sendNotice(int type, byte[] body) {
    if (closed) {
      return;
    }
    noticesInFlight.removeIf(n -> n.completion().isDone(n.request()));
    ByteBuffer notice =
        ControlInbox.notice(
            type, transport.rank(), channel, !sendingEnd, sentNotices++, body, outMac);
    try {
      Completion done = new Completion();
      UcpRequest r = endpoints[0].sendTaggedNonBlocking(notice, ControlInbox.TAG, done);
      noticesInFlight.add(new Notice(notice, r, done));
      toldPeerItStopped |= type == ControlInbox.CLOSE || type == ControlInbox.FAIL;
    } catch (RuntimeException e) {
      // the peer learns another way (its own timeout)
      transport.logDebug(description + ": a notice did not go out: " + e);
    }
  }

  protected CclException failure(String what) {
    return new CclException(description + ": " + what);
  }

  /** What a call that still needs the peer after it closed fails with. */
  protected CclException peerClosedFailure() {
    return failure("rank " + peer + " has closed its communicator");
  }

  /**
   * Releases the remote keys and hands over the endpoints, which {@link
   * UcxTransport#closeEndpoints} closes together with every other connection's. Runs on the closing
   * thread after the proxy thread has stopped (or during start-up, before it ran).
   *
   * @return the endpoints still open; empty once released
   */
  List<UcpEndpoint> release() {
    if (closed) {
      return List.of();
    }
    closed = true;
    List<UcpEndpoint> open = new ArrayList<>();
    for (int i = 0; i < endpoints.length; i++) {
      transport.release(peerSide[i]);
      peerSide[i] = null;
      if (endpoints[i] != null) {
        open.add(endpoints[i]);
        endpoints[i] = null;
      }
    }
    releaseKeys();
    noticesInFlight.clear();
    return open;
  }

  /** Releases this connection alone (a set-up that failed half-way, or a channel's own close). */
  public void close() {
    transport.closeEndpoints(release(), true);
  }

  /** Releases remote keys a subclass holds. */
  protected void releaseKeys() {}

  @Override
  public String toString() {
    return description;
  }
}
