/** Couriers a seller may name when shipping (the `courier` slug of `send`), with their tracking pages. */
export interface Courier {
  slug: string;
  name: string;
  /** The courier's public tracking page; `{awb}` is replaced by the encoded tracking number. */
  trackUrl: string;
}

export const COURIERS: readonly Courier[] = [
  { slug: 'jne', name: 'JNE', trackUrl: 'https://www.jne.co.id/tracking-package?awb={awb}' },
  { slug: 'jnt', name: 'J&T Express', trackUrl: 'https://www.jet.co.id/track?awb={awb}' },
  { slug: 'sicepat', name: 'SiCepat', trackUrl: 'https://www.sicepat.com/checkAwb?awb={awb}' },
  { slug: 'anteraja', name: 'AnterAja', trackUrl: 'https://anteraja.id/tracking?awb={awb}' },
  { slug: 'pos', name: 'Pos Indonesia', trackUrl: 'https://www.posindonesia.co.id/id/tracking?awb={awb}' },
  { slug: 'tiki', name: 'TIKI', trackUrl: 'https://www.tiki.id/id/tracking?awb={awb}' },
  { slug: 'ninja', name: 'Ninja Xpress', trackUrl: 'https://www.ninjaxpress.co/id-id/tracking?id={awb}' },
  { slug: 'lion', name: 'Lion Parcel', trackUrl: 'https://lionparcel.com/track/stt?q={awb}' },
  { slug: 'idexpress', name: 'ID Express', trackUrl: 'https://idexpress.com/tracking?awb={awb}' },
  { slug: 'spx', name: 'SPX Express', trackUrl: 'https://spx.co.id/track?{awb}' },
  { slug: 'sap', name: 'SAP Express', trackUrl: 'https://www.sap-express.id/tracking?awb={awb}' },
  { slug: 'wahana', name: 'Wahana', trackUrl: 'https://www.wahana.com/tracking?awb={awb}' },
];

const BY_SLUG = new Map(COURIERS.map((c) => [c.slug, c]));

export function courierBySlug(slug: string): Courier | undefined {
  return BY_SLUG.get(slug);
}

export function trackUrl(courier: Courier, number: string): string {
  return courier.trackUrl.replace('{awb}', encodeURIComponent(number));
}
