/**
 * Documents whose answer sits mid-chunk, after filler that shares the question's words, and the question a person
 * would ask in other words than the answer's (naming the document's topic, as one does: "in the park", "hotel").
 * One chunk each (under 256 tokens), each on its own topic.
 */
export interface AnswerDocument {
  question: string;
  before: string;
  answer: string;
  after: string;
}

export const ANSWER_DOCUMENTS: AnswerDocument[] = [
  {
    question: 'do I get money for cycling to the office',
    before:
      'This part of the handbook describes the benefits that come with working at the Lisbon office. The office building opens at eight in the morning and closes at seven in the evening. ' +
      'Money for office supplies is requested through the purchasing portal, not through your manager. Lockers on the ground floor are assigned by reception for a whole year at a time.',
    answer: 'Staff who cycle to the office receive 35 euros a month towards their bicycle.',
    after: 'Showers are on the second floor next to the meeting rooms. Visitors must sign in at reception and wear a badge at all times. Questions about any of these rules go to the people team.',
  },
  {
    question: 'how much did the deep sea vent trip cost',
    before:
      'The survey ship left Ponta Delgada in late April with a crew of forty-two scientists and engineers. The deep sea cameras were calibrated during the first week, while the ship crossed the ridge. ' +
      'Weather delayed the vent dives by four days, and two instruments had to be repaired on board. The trip also trained six doctoral students in handling the remotely operated vehicle.',
    answer: 'All told, the hydrothermal vent expedition cost 4.2 million euros, most of it ship time.',
    after: 'Samples from the vents are stored at the institute in Kiel. The next survey is planned for the autumn of 2025, subject to funding.',
  },
  {
    question: 'how often do I have to update my password',
    before:
      'Every account in the company directory belongs to exactly one person and must never be shared. Laptops lock themselves after five minutes without input, and screens should be locked by hand when you leave your desk. ' +
      'Security incidents are reported to the service desk by phone, day or night. Software may be installed only from the company catalogue.',
    answer: 'Passwords must be changed every ninety days and may not repeat any of the last twelve.',
    after: 'Two-factor sign-in is required for e-mail and for the VPN. USB sticks from unknown sources must be handed to the service desk unopened.',
  },
  {
    question: 'is there vegetarian food at lunch',
    before:
      'The canteen on the fourth floor serves breakfast from half past seven and lunch from noon until two. Prices are subsidised for employees and interns, and payment is by badge only. ' +
      'Trays go back to the racks by the exit, and the dishwashers are emptied by the kitchen staff. Seating near the windows is reserved for visitors on Thursdays.',
    answer: 'A meat-free main course is offered every day, and vegan dishes are marked with a green leaf.',
    after: 'Allergens are listed on the weekly menu posted at the entrance. Special diets can be ordered a day in advance from the chef.',
  },
  {
    question: 'how long can a mother or father stay home on leave after having a baby',
    before:
      'This policy applies to all permanent employees after their probation period. Requests are filed in the HR system at least two months before the planned start. ' +
      'Managers must confirm a request within ten working days, and may only refuse it for reasons stated in writing. Part-time work after a leave is arranged with the team lead.',
    answer: 'New parents may take up to sixteen weeks of paid leave within the first year after a birth or adoption.',
    after: 'Holiday days keep accruing during the leave. The pension contributions are paid by the company in full.',
  },
  {
    question: 'what temperature is the machine room kept at',
    before:
      'Access to the data centre requires a badge and a PIN, and every visit is logged by the security desk. Cables are labelled at both ends with the rack and port number. ' +
      'Spare disks are kept in the locked cabinet next to the door, together with the inventory list. Changes to the network are announced a week ahead on the operations channel.',
    answer: 'The cooling system keeps the server hall between 18 and 24 degrees Celsius, and an alarm sounds above 27.',
    after: 'Fire suppression uses inert gas, so the hall must be evacuated when the siren starts. Generators are tested on the first Monday of each month.',
  },
  {
    question: 'what is the fine for bringing a book back late',
    before:
      'Library cards are free for residents and cost ten euros a year for everyone else. Up to fifteen items can be borrowed at once, including magazines and films. ' +
      'Books are lent for three weeks, films for one week, and loans can be extended online twice. Quiet rooms on the upper floor may be booked for two hours at a time.',
    answer: 'Items returned after the due date are charged twenty cents per day, up to a maximum of five euros.',
    after: 'Lost items are replaced at their list price. The reading room closes thirty minutes before the building does.',
  },
  {
    question: 'who pays for the heating check-up',
    before:
      'Rent is due on the first working day of each month and is paid by bank transfer. The caretaker lives in flat 1A and can be reached on weekdays between nine and five. ' +
      'Bicycles must be parked in the courtyard shed, never in the stairwell. Rubbish is collected on Tuesdays and Fridays; glass goes to the container at the corner.',
    answer: "The gas boiler in every flat is serviced once a year by the landlord's engineer, free of charge to tenants.",
    after: 'Tenants must give access for the service on the date announced by letter. Smoke detectors are checked at the same visit.',
  },
  {
    question: 'how much compensation for a delayed short flight',
    before:
      'This leaflet summarises your rights when you fly from an airport in the European Union. Keep your boarding pass and any receipts, since airlines ask for them with every claim. ' +
      'If you are denied boarding against your will, ask the airline staff for a written statement of the reasons. Meals and drinks must be offered while you wait at the airport.',
    answer: 'When a flight of under 1,500 kilometres lands more than three hours late, each passenger is owed 250 euros.',
    after: 'Claims are made to the airline first and then to the national enforcement body. Extraordinary circumstances such as storms exempt the airline.',
  },
  {
    question: 'how frequently should I water a cactus',
    before:
      'Most indoor plants prefer bright light that does not fall directly on their leaves. Turn the pots a quarter turn every week, so that the plants grow evenly. ' +
      'Repot young plants each spring in a pot one size larger, with fresh soil. Dust on broad leaves can be wiped off with a damp cloth.',
    answer: 'Succulents should get water only once the soil has dried out completely, roughly every two to three weeks.',
    after: 'Ferns, on the other hand, like their soil moist and the air humid. Yellow leaves usually mean too much water rather than too little.',
  },
  {
    question: 'what is the minimum age to hire a car',
    before:
      'The rental period starts when the keys are handed over and ends when the car is returned to the branch. The car must be returned with a full tank, otherwise refuelling is charged at the pump price plus a fee. ' +
      "Smoking and pets are not allowed in any of our vehicles. A credit card in the driver's name is needed for the deposit.",
    answer: 'Drivers must be at least 21 years old and have held their licence for two years or more.',
    after: 'Additional drivers can be added at the counter for a daily fee. Trips abroad must be declared when the car is booked.',
  },
  {
    question: 'how fast is my connection',
    before:
      'Your contract runs for twenty-four months and then continues month by month until you cancel it. The router stays the property of the provider and must be returned when the contract ends. ' +
      'Installation is free when you order online, and a technician visit costs sixty euros otherwise. The customer portal shows your bills and data use.',
    answer: 'The line delivers download rates of up to 500 megabits per second and uploads of up to 50.',
    after: 'Speeds over Wi-Fi depend on the distance to the router and on walls in between. Faults are reported through the portal or by phone.',
  },
  {
    question: 'how many people fit at the barn for a wedding',
    before:
      'Hollow Barn sits on a working farm twenty minutes from the city, with parking for sixty cars. Couples may bring their own caterer, provided the caterer is insured and registered. ' +
      'Music must stop at midnight because of the neighbours, and fireworks are not permitted. The barn is heated in winter and the doors open onto the orchard in summer.',
    answer: 'The main hall seats 120 guests for dinner, or holds 180 standing at a reception.',
    after: 'A smaller room next to the hall can be used for children or as a quiet space. Viewings are arranged by appointment on weekday afternoons.',
  },
  {
    question: 'when is the coffee maker cleaned of limescale',
    before:
      'The kitchen on each floor is shared by everyone working there, so please leave it as you would like to find it. Dishes go into the dishwasher, not into the sink, and the dishwasher is started by whoever fills it. ' +
      'Milk in the fridge is bought by the office, everything else should carry your name. The fridge is emptied every Friday afternoon.',
    answer: 'The espresso machine is descaled every second Monday by the team whose name is on the rota that week.',
    after: 'The rota hangs on the inside of the cupboard door. Swap weeks with another team if you cannot make it.',
  },
  {
    question: 'where can runners get something to drink during the race',
    before:
      'Bib numbers are collected at the expo on the two days before the race, with a photo ID. The start is in three waves, ten minutes apart, assigned by your expected finishing time. ' +
      'Bags can be left at the cloakroom tent near the start and collected at the finish. The course closes six hours after the last wave starts.',
    answer: 'Drinks are handed out every five kilometres along the course, with gels at kilometres 20 and 30.',
    after: 'Medical tents are at the halfway point and at the finish. Headphones are allowed, but runners must be able to hear marshals.',
  },
  {
    question: 'what should I do when someone takes my debit card',
    before:
      'Your debit card can be used in shops and at cash machines in all countries that accept the network. Daily limits for cash and purchases can be changed in the app, and the change applies at once. ' +
      "Contactless payments above fifty euros ask for your PIN. Statements list every card payment with the merchant's name.",
    answer: 'If your card is stolen, block it right away in the app or call the 24-hour line on 0800 123 456.',
    after: 'A replacement card arrives by post within five working days. Disputed payments are investigated within thirty days.',
  },
  {
    question: 'can I let my puppy off the leash in the park',
    before:
      'The park opens at sunrise and closes at sunset; the gates are locked by the wardens. Barbecues are allowed only in the marked area by the lake, and ashes go in the metal bins. ' +
      'Cycling is permitted on the wide paths but not on the lawns. Ball games are welcome on the east meadow.',
    answer: 'Dogs must be kept on a lead near the playground and the pond, but may run free on the north field.',
    after: 'Owners must pick up after their dogs and use the bins at each gate. Swimming in the pond is forbidden for people and animals alike.',
  },
  {
    question: 'when must I submit my yearly tax declaration',
    before:
      'Self-employed people keep their own accounts and must keep receipts for ten years. Business expenses such as tools, training and a share of your phone bill reduce your taxable income. ' +
      'Quarterly advance payments are set by the tax office from your last assessment. An accountant can file on your behalf if you give them power of attorney.',
    answer: 'The annual income return is due by the thirty-first of July of the following year.',
    after: 'Late filing is charged a surcharge of up to ten percent of the tax due. Extensions are granted on request when an accountant files.',
  },
  {
    question: 'when can I visit the museum without paying',
    before:
      'The Harbour Museum tells the story of the port from the first fishing boats to container ships. Guided tours in English start at eleven and at three, and audio guides are available in six languages. ' +
      'Large bags must be left in the lockers by the entrance. The café on the top floor looks out over the docks.',
    answer: 'Admission is free for children under twelve and for everyone on the first Sunday of the month.',
    after: 'Tickets bought online skip the queue at the desk. Photography without flash is allowed in all galleries.',
  },
  {
    question: 'until what time can I stay in my hotel room on the last day',
    before:
      'Welcome to the Hotel Miramar; reception is staffed around the clock. Breakfast is served in the garden room from seven until half past ten, with a gluten-free buffet on request. ' +
      'The pool is open from eight until eight, and towels are provided at the pool bar. Taxis can be ordered at reception.',
    answer: 'Rooms must be vacated by eleven on the day of departure, and luggage can be stored until the evening.',
    after: 'Late departure until two can be booked for a fee, subject to availability. Parking in the garage costs fifteen euros a night.',
  },
];

/** A file with structure (headed sections, a list, a table) and questions, each answered by one line or sentence of it. */
export interface StructuredDocument {
  name: string;
  body: string;
  questions: { question: string; answer: string }[];
}

interface Section {
  heading: string;
  /** Sentences around the answer, on the section's topic (the heading's words, the question's). */
  before: string;
  answer: string;
  after: string;
  question: string;
}

/**
 * Handbook-like reports: sections under a heading line (no full stop), then the section's text. As plain text
 * (the heading alone on its line, a blank line after it) and as Markdown (`## heading`).
 */
function headed(name: string, title: string, sections: Section[], form: 'text' | 'markdown'): StructuredDocument {
  const heading = (h: string) => (form === 'markdown' ? `## ${h}` : h);
  const body = [form === 'markdown' ? `# ${title}` : title, ...sections.map((s) => `${heading(s.heading)}\n\n${s.before} ${s.answer} ${s.after}`)].join('\n\n');
  return { name, body: `${body}\n`, questions: sections.map((s) => ({ question: s.question, answer: s.answer })) };
}

const INSTITUTE: Section[] = [
  {
    heading: 'Expedition costs',
    before: 'The annual report of the marine institute describes the year of its research fleet. The ships sailed on eleven voyages between March and November.',
    answer: 'The polar voyage came to 1.9 million euros, two thirds of it fuel and crew.',
    after: 'Two new sonar instruments were bought from the same budget.',
    question: 'how much did the arctic expedition cost',
  },
  {
    heading: 'Life on board',
    before: 'The annual report of the marine institute lists what it offers the people who work for it. Most of these services are run by volunteers.',
    answer: 'Meals at sea cost crew and scientists nothing.',
    after: 'Laundry is done once a week by the steward.',
    question: 'do researchers pay for food on board',
  },
  {
    heading: 'Library loans',
    before: 'The annual report of the marine institute describes how its collections grew this year. Journals going back to 1890 were scanned by students over the summer.',
    answer: 'Borrowed books must be returned within nineteen days.',
    after: 'Rare volumes stay in the reading room and are never lent.',
    question: 'how long is a library loan',
  },
  {
    heading: 'Diving safety',
    before: 'The annual report of the marine institute records the work done from its boats. Plans for each day are approved by the head of operations the evening before.',
    answer: 'No one descends below forty metres without a partner and a second air supply.',
    after: 'Two minor incidents were reported this year, neither with injuries.',
    question: 'what are the diving safety rules for going deep',
  },
];

const TENANTS: Section[] = [
  {
    heading: 'Rubbish and recycling',
    before: 'This guide explains how the building at Linden Court works. The caretaker lives in flat 1A and answers the phone on weekdays.',
    answer: 'Paper goes out on Mondays, plastic and metal on Thursdays.',
    after: 'Garden waste is taken twice a year after a notice in the hallway.',
    question: 'which days is recycling collected',
  },
  {
    heading: 'Quiet hours',
    before: 'This guide asks everyone at Linden Court to be considerate of their neighbours. The walls between flats are thin, and sound carries up the stairwell.',
    answer: 'Between ten at night and seven in the morning, music and power tools must stay off.',
    after: 'Parties can be announced on the notice board a week in advance.',
    question: 'what are the quiet hours in the building',
  },
  {
    heading: 'Keys and locks',
    before: 'This guide covers the doors of Linden Court: the front door, the cellar and the flats. Every flat comes with a cellar compartment of its own.',
    answer: 'A lost key is replaced by the caretaker for a fee of 45 euros.',
    after: 'Changing a lock yourself is not allowed, since the master key must fit.',
    question: 'what does it cost to get a new key for my flat',
  },
  {
    heading: 'Balconies',
    before: 'This guide describes the flats of Linden Court on the garden side. Flower boxes must hang on the inside of the railing.',
    answer: 'Satellite dishes may be mounted only with the landlord\'s written consent.',
    after: 'Washing may be dried below the height of the railing.',
    question: 'can I install a TV antenna on my balcony',
  },
];

const CLUB: Section[] = [
  {
    heading: 'Membership fees',
    before: 'The rowing club of Riverside welcomes new members every spring. The club house by the weir has changing rooms, a gym and a small bar.',
    answer: 'Adults pay 240 euros a year and students half of that.',
    after: 'The money is due by the end of March.',
    question: 'what are the membership fees for rowing',
  },
  {
    heading: 'Boat use',
    before: 'The rowing club of Riverside owns twenty hulls, from singles to an eight. Everything taken out is written in the book at the door.',
    answer: 'Novices may take out only the wide training sculls until a coach signs them off.',
    after: 'Damage must be reported to the captain the same day.',
    question: 'can a beginner rower take any boat',
  },
  {
    heading: 'Winter training',
    before: 'The rowing club of Riverside is open all year round. When the river is high or frozen nobody goes out on the water.',
    answer: 'From November to February the squad meets on the rowing machines on Tuesday and Thursday evenings.',
    after: 'Weekend outings go ahead whenever the water allows.',
    question: 'how does winter training work for rowers',
  },
  {
    heading: 'Safety on the water',
    before: 'The rowing club of Riverside follows the river authority\'s rules. Crews keep to the right going upstream.',
    answer: 'Every rower must have passed a swimming test of two hundred metres in clothes.',
    after: 'Life jackets are kept in the launch for coaches.',
    question: 'what safety test do rowers need to pass',
  },
];

const CLINIC: Section[] = [
  {
    heading: 'Appointments',
    before: 'The Elm Street clinic has four family doctors and a nurse. The waiting room opens fifteen minutes before the first patient is seen.',
    answer: 'Visits are booked by phone between eight and ten, or online at any hour.',
    after: 'Urgent cases are seen the same day.',
    question: 'how can I book a visit with a doctor',
  },
  {
    heading: 'Repeat prescriptions',
    before: 'The Elm Street clinic keeps a record of every patient it treats. Pharmacies nearby are sent what the doctors decide electronically.',
    answer: 'A refill of regular medication takes two working days once requested.',
    after: 'Controlled drugs need a review with the doctor first.',
    question: 'how long does a repeat prescription take',
  },
  {
    heading: 'Vaccinations',
    before: 'The Elm Street clinic follows the national schedule for children and adults. Records are kept in the patient file.',
    answer: 'Flu shots are given without an appointment on Wednesday mornings in autumn.',
    after: 'Travel needs are discussed a month ahead.',
    question: 'when are flu vaccinations given',
  },
  {
    heading: 'Test results',
    before: 'The Elm Street clinic sends blood samples to the hospital laboratory each afternoon. Most of them are back within the week.',
    answer: 'The nurse calls only when a value is outside the normal range.',
    after: 'Patients may also read everything in the online portal.',
    question: 'will someone call me with my test results',
  },
];

const GARDEN: Section[] = [
  {
    heading: 'Plot rent',
    before: 'The allotment society of North Fields manages sixty gardens along the railway. Each has a water tap and a small shed.',
    answer: 'A full plot costs 85 euros per season, a half plot 50.',
    after: 'The money is collected at the spring meeting.',
    question: 'how much is the rent for an allotment plot',
  },
  {
    heading: 'Bonfires',
    before: 'The allotment society of North Fields asks members to compost what they can. Woody cuttings can go to the shared chipper.',
    answer: 'Burning garden waste is forbidden from May to September.',
    after: 'The fire brigade has been called twice in past years.',
    question: 'are bonfires allowed on the allotments in summer',
  },
  {
    heading: 'Water use',
    before: 'The allotment society of North Fields pays the water company for every garden. Taps are shut off over the winter to stop pipes bursting.',
    answer: 'Hoses may be used only before nine in the morning and after six in the evening.',
    after: 'Rain barrels are encouraged and can be bought through the society.',
    question: 'when may gardeners water with a hose',
  },
  {
    heading: 'Keeping bees',
    before: 'The allotment society of North Fields welcomes wildlife on its gardens. Hedges along the fence are left uncut until late summer.',
    answer: 'Hives need the committee\'s approval and a course certificate.',
    after: 'Two members already look after colonies near the orchard.',
    question: 'what do I need for keeping bees on an allotment',
  },
];

const PLANETARIUM: Section[] = [
  {
    heading: 'Shows',
    before: 'The city planetarium projects the night sky on a dome of eighteen metres. Seats recline so that the whole dome can be seen.',
    answer: 'The main programme starts every hour on the hour from eleven to five.',
    after: 'A programme for children runs on Saturday mornings.',
    question: 'how often do the star shows start',
  },
  {
    heading: 'Telescope evenings',
    before: 'The city planetarium has an observatory on its roof. Volunteers from the astronomy club explain what can be seen.',
    answer: 'On clear Fridays visitors can look through the roof telescopes until midnight.',
    after: 'When it is cloudy the event is cancelled by noon on the website.',
    question: 'when are the telescope evenings',
  },
  {
    heading: 'Birthday parties',
    before: 'The city planetarium can be booked for celebrations on weekend afternoons. Bookings are made at the ticket desk or by phone.',
    answer: 'Children\'s parties of up to twelve guests include a private show and a room for cake.',
    after: 'Decorations must not be fixed to the walls.',
    question: "what is included in a children's birthday party booking",
  },
  {
    heading: 'Accessibility',
    before: 'The city planetarium was renovated in 2019. The dome and the exhibition are on the ground floor.',
    answer: 'Six places for wheelchairs are kept free at the back of the dome.',
    after: 'Assistance dogs are welcome.',
    question: 'is there wheelchair access to the shows',
  },
];

const HOSTEL: Section[] = [
  {
    heading: 'Arrival',
    before: 'The harbour youth hostel stands on the quay, five minutes on foot from the ferry. Its reception is on the first floor above the bakery.',
    answer: 'Beds can be taken from three in the afternoon; earlier guests may leave their bags in the lock room.',
    after: 'Late arrivals should phone ahead.',
    question: 'when is arrival possible at the hostel',
  },
  {
    heading: 'Dormitories',
    before: 'The harbour youth hostel has rooms for two, four and eight guests. Sheets are included in the price.',
    answer: 'Mixed rooms sleep eight, and two rooms on the top floor are kept for women only.',
    after: 'Private rooms have their own shower.',
    question: 'are there female only dorms',
  },
  {
    heading: 'Breakfast',
    before: 'The harbour youth hostel shares its kitchen with the bakery below. Guests may cook their own meals in the evening.',
    answer: 'The morning buffet runs from seven to half past nine and costs six euros.',
    after: 'Packed lunches can be ordered the day before.',
    question: 'when is breakfast served and what does it cost',
  },
  {
    heading: 'Curfew',
    before: 'The harbour youth hostel is in a quiet street of the old town. The front door locks automatically.',
    answer: 'There is no curfew: each guest gets a door code valid for their stay.',
    after: 'Noise in the corridors after eleven may lead to a warning.',
    question: 'do I have to be back at the hostel by a certain time at night',
  },
];

const CHOIR: Section[] = [
  {
    heading: 'Rehearsals',
    before: 'The Hillside community choir sings music from five centuries. New voices are welcome in every section.',
    answer: 'The whole choir practises on Wednesday evenings from half past seven in the church hall.',
    after: 'Extra sessions are called before concerts.',
    question: 'when do choir rehearsals take place',
  },
  {
    heading: 'Auditions',
    before: 'The Hillside community choir keeps its numbers balanced between sopranos, altos, tenors and basses. The director meets every newcomer.',
    answer: 'Nobody has to sing alone: the director only checks which part suits your range.',
    after: 'Reading music helps but is not required.',
    question: 'is there an audition to join the choir',
  },
  {
    heading: 'Concert dress',
    before: 'The Hillside community choir performs twice a year, in June and before Christmas. Tickets are sold by members.',
    answer: 'Singers wear black from head to toe, with a red scarf for the winter concert.',
    after: 'Folders are handed out at the dress rehearsal.',
    question: 'what do singers wear at choir concerts',
  },
  {
    heading: 'Subscription',
    before: 'The Hillside community choir is a registered charity. Its accounts are presented at the annual meeting.',
    answer: 'Each singer gives 15 euros a month, which covers the hall, the director and the sheet music.',
    after: 'Students and the unemployed may pay what they can.',
    question: 'how much is the choir subscription',
  },
];

/** Lists: a lead-in line, then one item per line (bullets, numbers) or per block (Markdown list items). */
const LISTS: StructuredDocument[] = [
  {
    name: 'pool-rules.md',
    body:
      '# Swimming pool rules\n\nThe municipal pool asks every visitor to follow these rules:\n\n' +
      '- Children under eight must be accompanied in the water by an adult.\n' +
      '- Outdoor shoes are left on the racks before the changing rooms.\n' +
      '- The diving board is open only when a lifeguard sits on the high chair.\n' +
      '- Lockers take a one euro coin, which comes back when the locker is opened.\n' +
      '- Food and drink stay in the café area next to the entrance.\n',
    questions: [
      { question: 'can my six year old swim alone at the municipal pool', answer: 'Children under eight must be accompanied in the water by an adult.' },
      { question: 'where do I leave my shoes at the swimming pool', answer: 'Outdoor shoes are left on the racks before the changing rooms.' },
      { question: 'when is the diving board at the pool open', answer: 'The diving board is open only when a lifeguard sits on the high chair.' },
      { question: 'do the swimming pool lockers need a coin', answer: 'Lockers take a one euro coin, which comes back when the locker is opened.' },
    ],
  },
  {
    name: 'travel-checklist.txt',
    body:
      'Travel checklist for the field trip\n\n' +
      '1. Passports must be valid for six months after the return date.\n' +
      '2. Each student brings a sleeping bag rated for zero degrees.\n' +
      '3. Phones are handed in at breakfast and returned at dinner.\n' +
      '4. The emergency contact form is signed by a parent before departure.\n' +
      '5. Pocket money is limited to 60 euros for the week.\n',
    questions: [
      { question: 'how long must a passport be valid for the field trip', answer: '1. Passports must be valid for six months after the return date.' },
      { question: 'what kind of sleeping bag do I pack for the field trip', answer: '2. Each student brings a sleeping bag rated for zero degrees.' },
      { question: 'when do students get their phones back on the field trip', answer: '3. Phones are handed in at breakfast and returned at dinner.' },
      { question: 'how much pocket money can a student take on the field trip', answer: '5. Pocket money is limited to 60 euros for the week.' },
    ],
  },
  {
    name: 'workshop-rules.html',
    body:
      '<html><head><title>Workshop rules</title></head><body><h1>Workshop rules</h1><p>Everyone who uses the wood workshop in the basement follows these rules:</p><ul>' +
      '<li>Safety glasses are worn by everyone in the room while any saw or drill runs.</li>' +
      '<li>The lathe may be used only after the induction course with the workshop manager.</li>' +
      '<li>Offcuts longer than half a metre go on the rack by the window for others to use.</li>' +
      '<li>The last person out sweeps the floor and switches off the dust extractor.</li>' +
      '<li>Hand tools are signed out on the clipboard by the door.</li>' +
      '</ul></body></html>\n',
    questions: [
      { question: 'do I need eye protection in the workshop', answer: 'Safety glasses are worn by everyone in the room while any saw or drill runs.' },
      { question: 'who is allowed to use the lathe in the workshop', answer: 'The lathe may be used only after the induction course with the workshop manager.' },
      { question: 'where do spare wood scraps go in the workshop', answer: 'Offcuts longer than half a metre go on the rack by the window for others to use.' },
      { question: 'who cleans up the workshop at the end of the day', answer: 'The last person out sweeps the floor and switches off the dust extractor.' },
    ],
  },
];

/** Tables: one row answers each question (an HTML table, a CSV sheet). */
const TABLES: StructuredDocument[] = [
  {
    name: 'waste-depot.html',
    body:
      '<html><head><title>Waste depot</title></head><body><h1>What the waste depot takes</h1><table>' +
      '<tr><th>Item</th><th>Where</th><th>Charge</th></tr>' +
      '<tr><td>Fridges and freezers</td><td>Bay 2</td><td>10 euros each</td></tr>' +
      '<tr><td>Car tyres</td><td>Bay 5</td><td>3 euros each, rims removed</td></tr>' +
      '<tr><td>Paint and solvents</td><td>Hazardous waste hut</td><td>free up to 20 litres</td></tr>' +
      '<tr><td>Garden waste</td><td>Green container</td><td>free</td></tr>' +
      '<tr><td>Mattresses</td><td>Bay 7</td><td>8 euros each</td></tr>' +
      '</table></body></html>\n',
    questions: [
      { question: 'what does the waste depot charge for a fridge', answer: 'Fridges and freezers | Bay 2 | 10 euros each' },
      { question: 'where do tyres go at the waste depot', answer: 'Car tyres | Bay 5 | 3 euros each, rims removed' },
      { question: 'can I bring leftover paint to the waste depot', answer: 'Paint and solvents | Hazardous waste hut | free up to 20 litres' },
      { question: 'how much does the waste depot charge for a mattress', answer: 'Mattresses | Bay 7 | 8 euros each' },
    ],
  },
  {
    name: 'spa-prices.html',
    body:
      '<html><head><title>Spa services</title></head><body><h1>Spa services and prices</h1><p>The prices below hold for the whole year.</p><table>' +
      '<tr><th>Service</th><th>Opening hours</th><th>Price</th></tr>' +
      '<tr><td>Sauna</td><td>9 to 21</td><td>12 euros</td></tr>' +
      '<tr><td>Steam bath</td><td>10 to 20</td><td>9 euros</td></tr>' +
      '<tr><td>Massage</td><td>by appointment</td><td>55 euros an hour</td></tr>' +
      '<tr><td>Salt water bath</td><td>7 to 22</td><td>6 euros</td></tr>' +
      '<tr><td>Solarium</td><td>12 to 18</td><td>4 euros for ten minutes</td></tr>' +
      '</table></body></html>\n',
    questions: [
      { question: 'what does the sauna at the spa cost', answer: 'Sauna | 9 to 21 | 12 euros' },
      { question: 'how much is a massage at the spa', answer: 'Massage | by appointment | 55 euros an hour' },
      { question: 'how early does the spa salt water bath open', answer: 'Salt water bath | 7 to 22 | 6 euros' },
      { question: 'until when is the steam bath at the spa open', answer: 'Steam bath | 10 to 20 | 9 euros' },
    ],
  },
  {
    name: 'bus-timetable.csv',
    body:
      'Line,From,To,First bus,Last bus\n' +
      '4,Central Station,University,05:40,23:10\n' +
      '11,Harbour,Airport,04:55,00:30\n' +
      '23,Old Town,Hospital,06:15,21:45\n' +
      '37,Market Square,Zoo,08:00,19:00\n' +
      '52,Stadium,Industrial Park,05:10,22:20\n',
    questions: [
      { question: 'when does the last bus to the airport leave', answer: 'Line: 11 · From: Harbour · To: Airport · First bus: 04:55 · Last bus: 00:30' },
      { question: 'which bus line goes to the zoo', answer: 'Line: 37 · From: Market Square · To: Zoo · First bus: 08:00 · Last bus: 19:00' },
      { question: 'when is the first bus from central station to the university', answer: 'Line: 4 · From: Central Station · To: University · First bus: 05:40 · Last bus: 23:10' },
      { question: 'when does the last bus to the hospital leave', answer: 'Line: 23 · From: Old Town · To: Hospital · First bus: 06:15 · Last bus: 21:45' },
    ],
  },
];

/** Headed sections, lists and tables: 60 questions, each answered by one sentence, item or row. */
export const STRUCTURED_DOCUMENTS: StructuredDocument[] = [
  headed('institute-report.txt', 'Annual report of the marine institute', INSTITUTE, 'text'),
  headed('tenants-guide.txt', 'Linden Court tenants guide', TENANTS, 'text'),
  headed('rowing-club.md', 'Riverside rowing club', CLUB, 'markdown'),
  headed('clinic.txt', 'Elm Street clinic', CLINIC, 'text'),
  headed('allotments.md', 'North Fields allotment society', GARDEN, 'markdown'),
  headed('planetarium.txt', 'City planetarium', PLANETARIUM, 'text'),
  headed('hostel.txt', 'Harbour youth hostel', HOSTEL, 'text'),
  headed('choir.md', 'Hillside community choir', CHOIR, 'markdown'),
  ...LISTS,
  ...TABLES,
];
