/**
 * Deterministic lead rows for the benchmark: names from common first and last names (about
 * one in five last names contains "son"), one first name in a hundred is "Ingrid", and one
 * lead in 50,000 is a "Quenneville" (the rare fragment); phones are unique, emails derive
 * from the name and the row number, statuses and tags follow a skewed distribution.
 */
const FIRST = (
  'James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara ' +
  'Richard Susan Joseph Jessica Thomas Sarah Charles Karen Daniel Nancy Matthew Lisa Anthony ' +
  'Betty Mark Margaret Donald Sandra Steven Ashley Paul Kimberly Andrew Emily Joshua Donna ' +
  'Kenneth Michelle Kevin Carol Brian Amanda George Dorothy Timothy Melissa Ronald Deborah ' +
  'Edward Stephanie Jason Rebecca Jeffrey Sharon Ryan Laura Jacob Cynthia Gary Kathleen ' +
  'Nicholas Amy Eric Angela Jonathan Shirley Stephen Anna Larry Brenda Justin Pamela Scott ' +
  'Emma Brandon Nicole Benjamin Helen Samuel Samantha Gregory Katherine Alexander Christine ' +
  'Frank Debra Patrick Rachel Raymond Carolyn Jack Janet Dennis Ingrid'
).split(' ');
const LAST = (
  'Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez ' +
  'Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris ' +
  'Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen ' +
  'Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Gomez ' +
  'Phillips Evans Turner Diaz Parker Cruz Edwards Collins Reyes Stewart Morris Morales Murphy ' +
  'Cook Rogers Gutierrez Ortiz Morgan Cooper Peterson Bailey Reed Kelly Howard Ramos Kim Cox ' +
  'Ward Richardson Watson Brooks Chavez Wood James Bennett Gray Mendoza Ruiz Hughes Price ' +
  'Alvarez Castillo Sanders Patel Myers Long Ross Foster Jimenez Powell Jenkins Perry Russell ' +
  'Sullivan Bell Coleman Butler Henderson Barnes Gonzales Fisher Vasquez Simmons Romero ' +
  'Jordan Patterson Alexander Hamilton Graham Reynolds Griffin Wallace Moreno West Cole ' +
  'Hayes Bryant Herrera Gibson Ellis Tran Medina Aguilar Stevens Murray Ford Castro Marshall ' +
  'Owens Harrison Fernandez Mcdonald Woods Washington Kennedy Wells Vargas Henry Chen Freeman ' +
  'Webb Tucker Guzman Burns Crawford Olson Simpson Porter Hunter Gordon Mendez Silva Shaw ' +
  'Snyder Mason Dixon Munoz Hunt Hicks Holmes Palmer Wagner Black Robertson Boyd Rose Stone ' +
  'Salazar Fox Warren Mills Meyer Rice Schmidt Garza Daniels Ferguson Nichols Stephens Soto ' +
  'Weaver Ryan Gardner Payne Grant Dunn Kelley Spencer Hawkins Arnold Pierce Hansen Peters ' +
  'Santos Hart Bradley Knight Elliott Cunningham Duncan Armstrong Hudson Carroll Lane Riley ' +
  'Andrews Ray Berry Perkins Hoffman Johnston Matthews Pena Richards Willis Carson Erickson ' +
  'Jacobson Dawson Gustafson Larson Paulson Emerson Hudgson Nilsson Carlson Benson Watson'
).split(' ');
const DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example', 'corp.example'];
const STATUSES = [
  'new',
  'new',
  'new',
  'new',
  'new',
  'contacted',
  'contacted',
  'qualified',
  'won',
  'lost',
];
const TAGS = ['vip', 'spring', 'boiler', 'referral', 'web', 'newsletter', 'repeat', 'commercial'];

export const RARE_LAST_NAME = 'Quenneville';
export const RARE_EVERY = 50_000;

/** A small deterministic PRNG (mulberry32), so every run seeds the same rows. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface LeadSeedRow {
  name: string;
  phone: string;
  email: string;
  status: string;
  tags: string[];
}

/** The i-th lead of a tenant whose phones start at `phoneBase` (10 digits after +1). */
export function leadRow(i: number, phoneBase: number, rand: () => number): LeadSeedRow {
  const first = FIRST[Math.floor(rand() * FIRST.length)] as string;
  const last =
    i % RARE_EVERY === 7 ? RARE_LAST_NAME : (LAST[Math.floor(rand() * LAST.length)] as string);
  const domain = DOMAINS[i % DOMAINS.length] as string;
  const tags: string[] = [];
  const nTags = Math.floor(rand() * 3);
  for (let t = 0; t < nTags; t++) tags.push(TAGS[Math.floor(rand() * TAGS.length)] as string);
  return {
    name: `${first} ${last}`,
    phone: `+1${phoneBase + i}`,
    email: `${first}.${last}${i}@${domain}`.toLowerCase(),
    status: STATUSES[Math.floor(rand() * STATUSES.length)] as string,
    tags: [...new Set(tags)],
  };
}
