/**
 * The area a `geoloc` search looks in first: a box around the circle of radius `km` about a point, on
 * the sphere of mean Earth radius. The box widens to every longitude when the circle reaches a pole and
 * wraps across the antimeridian. Its half-width in longitude is the circle's widest point,
 * asin(sin r / cos lat) (r the angular radius), which is wider than r / cos lat: the narrower box lost
 * places due east or west of a point at high latitudes. A margin of 1e-9° keeps rounding from cutting
 * off a place that the exact distance admits.
 */
export interface Circle {
  lat: number
  lng: number
  km: number
}

export interface Box {
  minLat: number
  maxLat: number
  /** Undefined: every longitude. `west` > `east` when the box wraps across the antimeridian. */
  lng?: { west: number; east: number }
}

/** Mean Earth radius (IUGG), the sphere of every great-circle distance here. */
export const EARTH_RADIUS_KM = 6371.0088

export function boundingBox(circle: Circle): Box {
  const deg = 180 / Math.PI
  const margin = 1e-9
  const radius = circle.km / EARTH_RADIUS_KM
  const dLat = radius * deg + margin
  const minLat = circle.lat - dLat
  const maxLat = circle.lat + dLat
  const cosLat = Math.cos(circle.lat / deg)
  const dLng = maxLat >= 90 || minLat <= -90 || cosLat < 1e-9
    ? 180
    : Math.min(180, Math.asin(Math.min(1, Math.sin(Math.min(radius, Math.PI / 2)) / cosLat)) * deg + margin)
  const box: Box = { minLat: Math.max(-90, minLat), maxLat: Math.min(90, maxLat) }
  if (dLng >= 180) return box
  const west = circle.lng - dLng
  const east = circle.lng + dLng
  if (west < -180) return { ...box, lng: { west: west + 360, east } }
  if (east > 180) return { ...box, lng: { west, east: east - 360 } }
  return { ...box, lng: { west, east } }
}

/** Great-circle distance in km (haversine), the same in JavaScript and in SQL. */
export function haversineKm(latA: number, lngA: number, latB: number, lngB: number): number {
  const rad = Math.PI / 180
  const dLat = (latB - latA) * rad
  const dLng = (lngB - lngA) * rad
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(latA * rad) * Math.cos(latB * rad) * Math.sin(dLng / 2) ** 2
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)))
}
