import type { Booking, Call, CallSummary } from '@switchboard/db';

/** A booking as the lists show it: all but its address (the detail's). */
const listedBooking = ({ address: _address, ...listed }: Booking) => listed;

/** A call as it appears in both lists (docs/API.md, Calls). */
export const renderCallListItem = (c: CallSummary) => ({
  id: c.id,
  direction: c.direction,
  status: c.status,
  from: c.from,
  to: c.to,
  customer_name: c.customerName,
  duration_seconds: c.durationSeconds,
  outcome: c.outcome,
  started_at: c.startedAt.toISOString(),
  ended_at: c.endedAt?.toISOString() ?? null,
  has_transcript: c.hasTranscript,
  has_recording: c.hasRecording,
  receptionist_id: c.receptionistId,
  receptionist_name: c.receptionistName,
  booking: c.booking ? listedBooking(c.booking) : null,
  livemode: c.livemode,
});

/** The full detail: the list item plus everything a call carries. */
export const renderCallDetail = (c: Call) => ({
  ...renderCallListItem({
    ...c,
    hasTranscript: c.transcript !== null,
    hasRecording: c.recording !== null,
  }),
  customer_phone: c.customerPhone,
  answered_at: c.answeredAt?.toISOString() ?? null,
  end_reason: c.endReason,
  transcript: c.transcript,
  recording: c.recording,
  booking: c.booking,
  cost: c.cost,
  metadata: c.metadata,
});
